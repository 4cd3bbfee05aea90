"""Secrets in free text (log lines, commands) and in documents (hosts.yaml as loaded)."""

from __future__ import annotations

from sglconsole.core.secrets import mask_text, mask_tree


def test_secret_values_in_text_are_masked_and_nothing_else():
    assert (
        mask_text("server_args={'model_path': '/m', 'api_key': 'sk-1', 'hf_token': None}")
        == "server_args={'model_path': '/m', 'api_key': '****', 'hf_token': None}"
    )
    assert mask_text("ServerArgs(api_key='sk-2', max_total_tokens=5)") == (
        "ServerArgs(api_key='****', max_total_tokens=5)"
    )
    assert mask_text(
        "HF_TOKEN=hf_x python -m sglang.launch_server --api-key sk-3 --hf-token=y"
    ) == ("HF_TOKEN=**** python -m sglang.launch_server --api-key **** --hf-token=****")
    assert (
        mask_text('{"admin_api_key": "sk-4", "port": 3}') == '{"admin_api_key": "****", "port": 3}'
    )
    decode = (
        "Decode batch, #running-req: 1, #token: 84, token usage: 0.00, cuda graph: True,"
        " gen throughput (token/s): 63.85, #queue-req: 0, token_usage=0.5"
    )
    assert mask_text(decode) == decode
    assert mask_text("--api-key --port 5") == "--api-key --port 5"


def test_documents_mask_args_and_env():
    doc = {
        "profiles": {
            "p": {
                "args": ["--model-path", "/m", "--api-key", "sk-1"],
                "env": {"HF_TOKEN": "hf_1", "CUDA_VISIBLE_DEVICES": "0"},
            }
        },
        "hosts": {"h": {"exec_prefix": ["pct", "exec", "1", "--"], "servers": [{"gpus": [0]}]}},
    }
    masked = mask_tree(doc)
    assert masked["profiles"]["p"]["args"][-1] == "****"
    assert masked["profiles"]["p"]["env"] == {"HF_TOKEN": "****", "CUDA_VISIBLE_DEVICES": "0"}
    assert masked["hosts"] == doc["hosts"]
