from mathgraph.checksums import file_sha256


def test_file_sha256_matches_the_published_test_vector(tmp_path):
    # FIPS 180-2 example: sha256("abc").
    path = tmp_path / "abc.bin"
    path.write_bytes(b"abc")
    assert file_sha256(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_file_sha256_reads_files_larger_than_one_block(tmp_path):
    import hashlib

    data = bytes(range(256)) * 5000  # 1.28 MB: two 1 MiB blocks
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()
