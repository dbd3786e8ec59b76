"""What names a search index directory (``tasks.search.index`` writes it, ``mathgraph.registry`` recognises it):
kept apart so that the loader need not import the index, nor the index the loader; and what checks that a
directory holds an index this mathgraph reads (``read_manifest``, ``check_files``, ``read_safetensors``).

Format versions, all still read:

- 1: ``embeddings.safetensors`` (the vectors), ``rows.jsonl``, ``manifest.json``; searched exactly, loaded into
  memory.
- 2 (written now): ``vectors.npy`` (the L2-normalised vectors, float32, memory-mapped on load), ``rows.jsonl``
  (read a row at a time, by row number), ``manifest.json`` (with the ``index_type``, its build and search
  parameters and each file's size and sha256) and, for an approximate index type, ``ann.faiss`` (the faiss
  structure, memory-mapped where faiss can: ``tasks.search.index_types``)."""

from __future__ import annotations

from pathlib import Path

from mathgraph.checksums import file_sha256
from mathgraph.errors import UserError
from mathgraph.registry import CheckpointError, read_config

FORMAT = "mathgraph-search-index"
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
MODEL_TYPE = "search-index"  # config.json's and the manifest's model_type (mathgraph.registry)
MANIFEST_FILE = "manifest.json"
ROWS_FILE = "rows.jsonl"
VECTORS_FILE = "vectors.npy"  # version 2
SAFETENSORS_FILE = "embeddings.safetensors"  # version 1
STRUCTURE_FILE = "ann.faiss"  # version 2, approximate index types only
INDEX_TYPES = ("flat", "ivf-flat", "ivf-pq", "hnsw")  # tasks.search.index_types describes them
APPROXIMATE_TYPES = INDEX_TYPES[1:]
# Files larger than this are checked by their size when an index loads, not hashed: hashing reads every page,
# seconds for the vectors of a million rows, which a memory-mapped load is there to avoid.
CHECKSUM_LIMIT = 256 * 2**20


class IndexFormatError(UserError):
    """An index directory that is missing files, corrupted, or of an unknown format."""


def read_manifest(directory: Path) -> dict:
    """The validated ``manifest.json`` of an index directory (any version in ``READABLE_VERSIONS``)."""
    path = directory / MANIFEST_FILE
    if not path.is_file():
        raise IndexFormatError(f"{directory} is not a search index: no {MANIFEST_FILE} (not built, or saving failed)")
    try:
        manifest = read_config(directory, MANIFEST_FILE)
    except CheckpointError as err:
        raise IndexFormatError(str(err)) from err
    if manifest.get("format") != FORMAT:
        raise IndexFormatError(f"{path} is not a {FORMAT} manifest")
    if manifest.get("version") not in READABLE_VERSIONS:
        raise IndexFormatError(
            f"{path}: index format version {manifest.get('version')!r}, this mathgraph reads "
            f"{', '.join(map(str, READABLE_VERSIONS))}: rebuild the index"
        )
    fields = [("count", int), ("dimension", int), ("text_field", str), ("encoder", dict), ("sha256", dict)]
    if manifest["version"] >= 2:
        fields += [("index_type", str), ("parameters", dict), ("bytes", dict)]
    for key, kind in fields:
        if not isinstance(manifest.get(key), kind):
            raise IndexFormatError(f"{path}: field {key!r} is missing or not a {kind.__name__}")
    if manifest["version"] >= 2 and manifest["index_type"] not in INDEX_TYPES:
        raise IndexFormatError(
            f"{path}: unknown index type {manifest['index_type']!r} (this mathgraph knows {INDEX_TYPES})"
        )
    if manifest.get("encoder", {}).get("mode") == "fused":  # the joint vector's old name
        manifest["encoder"]["mode"] = "joint"
    return manifest


def check_files(directory: Path, manifest: dict) -> None:
    """Every file of a format 2 index is there with its recorded size, and, up to ``CHECKSUM_LIMIT``, its sha256."""
    for name, digest in manifest["sha256"].items():
        path = directory / name
        if not path.is_file():
            raise IndexFormatError(f"{directory} has no {name}")
        size = path.stat().st_size
        if size != manifest["bytes"].get(name) or (size <= CHECKSUM_LIMIT and file_sha256(path) != digest):
            differs = "its size differs" if size != manifest["bytes"].get(name) else "its sha256 differs"
            raise IndexFormatError(
                f"{path} does not match the checksum in {MANIFEST_FILE} ({differs}): the file was truncated or "
                "changed after saving; rebuild the index"
            )
    if manifest["index_type"] in APPROXIMATE_TYPES and STRUCTURE_FILE not in manifest["sha256"]:
        raise IndexFormatError(
            f"{directory / MANIFEST_FILE}: a {manifest['index_type']} index without {STRUCTURE_FILE}"
        )


def read_safetensors(directory: Path, manifest: dict):
    """The vectors of a format 1 index (``embeddings.safetensors``), checked against the manifest, in memory."""
    import numpy as np
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    for name in (SAFETENSORS_FILE, ROWS_FILE):
        path = directory / name
        if not path.is_file():
            raise IndexFormatError(f"{directory} has no {name}")
        if file_sha256(path) != manifest["sha256"].get(name):
            raise IndexFormatError(
                f"{path} does not match the checksum in {MANIFEST_FILE}: "
                "the file was truncated or changed after saving; rebuild the index"
            )
    try:
        embeddings = load_file(str(directory / SAFETENSORS_FILE)).get("embeddings")
    except (SafetensorError, OSError, ValueError) as err:
        raise IndexFormatError(f"cannot read {directory / SAFETENSORS_FILE}: {err}") from err
    expected = (manifest["count"], manifest["dimension"])
    if embeddings is None or embeddings.shape != expected or embeddings.dtype != np.float32:
        raise IndexFormatError(
            f"{directory / SAFETENSORS_FILE}: expected float32 {expected}, got "
            f"{None if embeddings is None else (embeddings.dtype, embeddings.shape)}"
        )
    return embeddings


__all__ = ["IndexFormatError", "read_manifest", "check_files", "read_safetensors"]
