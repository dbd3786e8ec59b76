"""``mathgraph serve`` as a command: its options, and the errors it gives before serving anything."""

import socket

import pytest

from mathgraph.cli import main
from mathgraph.cli.serve import bind
from mathgraph.serve.service import Limits


def test_the_limit_options_default_to_the_library_limits(capsys):
    assert main(["serve", "--help"]) == 0
    shown = capsys.readouterr().out
    for option, value in (
        ("--max-text-chars", Limits.max_text_chars),
        ("--max-batch", Limits.max_batch),
        ("--max-request-bytes", Limits.max_request_bytes),
        ("--max-k", Limits.max_k),
        ("--max-request-chars", Limits.max_request_chars),
    ):
        assert option in shown and f"(default: {value})" in shown
    assert "--index" in shown and "--model" in shown and "127.0.0.1" in shown


def test_a_port_in_use_is_reported_clearly():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ValueError, match=f"cannot listen on 127.0.0.1:{port}: the port is in use"):
            bind("127.0.0.1", port)


def test_port_zero_picks_a_free_port_on_a_tcp_listener():
    with bind("127.0.0.1", 0) as listener:
        assert listener.getsockname()[1] > 0
        # asyncio turns Nagle off (TCP_NODELAY) only on connections of a listener made with IPPROTO_TCP
        assert listener.proto == socket.IPPROTO_TCP


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--max-batch", "0"], "max_batch must be >= 1, got 0"),
        (["--model", "{empty}"], "{empty} holds nothing mathgraph can load (no config.json with a model_type)"),
        (["--model", "{empty}/gone"], "--model: no such model: {empty}/gone; "),
        (["--index", "{empty}/gone"], "--index: no such index: {empty}/gone; "),
        (["--model", "{empty}", "--hybrid"], "hybrid fusion needs a model package such as 'shipped'"),
        (["--index", "{empty}"], "index"),
    ],
)
def test_bad_setups_stop_with_a_message_and_status_2(tmp_path, capsys, argv, message):
    argv = [arg.replace("{empty}", str(tmp_path)) for arg in argv]
    assert main(["serve", "--port", "0", *argv]) == 2
    error = capsys.readouterr().err
    assert error.startswith("mathgraph: error:") and message.replace("{empty}", str(tmp_path)) in error


def test_the_service_says_a_model_directory_does_not_exist(tmp_path):
    """Past the command line's check (the library called directly): no such model, not 'holds nothing'."""
    from mathgraph.serve.service import Service

    with pytest.raises(FileNotFoundError, match=f"no such model: {tmp_path / 'gone'}"):
        Service.load(model=tmp_path / "gone")
