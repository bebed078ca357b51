"""``graphmem init``: a commented config file every command then finds, and the finding itself.

    graphmem init                          # ./graphmem.json, the offline profile: nothing to download
    graphmem init --profile download       # a local semantic embedder, downloaded once
    graphmem init --profile openai|ollama  # or a hosted / a local model server
    graphmem init --global                 # $GRAPHMEM_HOME/config.json (~/.graphmem/config.json)

Where a command finds its config, first match wins: ``--config FILE``, ``$GRAPHMEM_CONFIG``,
``./graphmem.json``, ``$GRAPHMEM_HOME/config.json``; none: the defaults of ``Memory()``. A config
file is JSON in which whole lines starting with ``//`` are comments.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from graphmem.errors import ConfigError, InvalidInputError
from graphmem.home import default_store_folder, graphmem_home

LOCAL_NAME = "graphmem.json"
PROFILES = ("offline", "download", "openai", "ollama")
FAKE_LLM_URL = "http://127.0.0.1:8790/v1"  # graphmem fake-llm's default address
#: the recommended local model (docs/models.md, "Which local embedder"), run at int8
DEFAULT_MODEL = "BAAI/bge-small-en-v1.5"
DEFAULT_EMBEDDER = {"model": DEFAULT_MODEL, "precision": "int8"}


def home() -> Path:
    return graphmem_home()


def find_config(explicit: Path | None) -> Path | None:
    """The config file a command uses (module docstring), or None."""
    if explicit is not None:
        return explicit
    if os.environ.get("GRAPHMEM_CONFIG"):
        return Path(os.environ["GRAPHMEM_CONFIG"])
    for candidate in (Path.cwd() / LOCAL_NAME, home() / "config.json"):
        if candidate.is_file():
            return candidate
    return None


def read_config(path: Path) -> dict[str, Any]:
    """A config file's object; ``//`` comment lines are skipped (JSON strings cannot span lines)."""
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads("\n".join("" if line.lstrip().startswith("//") else line for line in text.splitlines()))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read config {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config {path} must hold a JSON object")
    return data


def render(profile: str, data_dir: Path, model_dir: Path | None = None, llm_base_url: str | None = None) -> str:
    """The commented file of a profile, data kept under ``data_dir``."""
    if profile not in PROFILES:
        raise InvalidInputError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    llm, embedder, notes = _PROFILE_PARTS[profile](model_dir, llm_base_url)
    # a store keeps the embedder it was built with: the folder an unset path defaults to for this
    # embedder (home.py), so a profile and Memory.from_config with the same embedder share a store
    folder = default_store_folder(embedder["provider"], embedder.get("config") or {}, home=data_dir)
    store = {"provider": "embedded", "config": {"path": str(folder)}}
    lines = [
        f"// graphmem configuration, profile {profile!r} (written by `graphmem init`).",
        "// Every graphmem command finds it: --config FILE, else $GRAPHMEM_CONFIG, else ./graphmem.json,",
        "// else $GRAPHMEM_HOME/config.json. Lines starting with // are comments; the rest is JSON.",
        "{",
        *notes["llm"], f'  "llm": {json.dumps(llm)},',
        *notes["embedder"], f'  "embedder": {json.dumps(embedder)},',
        "  // The graph, memories and conversation log: an embedded store (a folder, no server). For Neo4j:",
        '  // {"provider": "neo4j", "config": {"url": "bolt://127.0.0.1:7687", "username": "neo4j", "password": "..."}}',
        f'  "graph_store": {json.dumps(store)},',
        "  // The audit log of memory changes (SQLite).",
        f'  "history_db_path": {json.dumps(str(data_dir / "history.db"))}',
        "}",
    ]
    return "\n".join(lines) + "\n"


def _download(model_dir: Path | None, llm_base_url: str | None) -> tuple[dict[str, Any], dict[str, Any], dict[str, list[str]]]:
    llm = {"provider": "openai_compatible", "config": {"base_url": llm_base_url or FAKE_LLM_URL, "model": "graphmem-fake"}}
    embedder = {"provider": "onnx", "config": {"model_dir": str(model_dir)} if model_dir else dict(DEFAULT_EMBEDDER)}
    return llm, embedder, {
        "llm": ["  // The LLM that extracts facts and the graph (add without --no-infer). `graphmem fake-llm` serves a",
                "  // fake one at this address (offline; each message becomes one fact, --script FILE scripts graphs).",
                "  // A real local model: base_url of Ollama (http://localhost:11434/v1) or vLLM, and its model name."],
        "embedder": ["  // The local embedder (pip install 'graphmem[local]'): \"model\" is downloaded once into",
                     "  // $GRAPHMEM_HOME/models (HF_ENDPOINT and HF_HOME honoured); \"model_dir\" is a folder you have.",
                     "  // \"precision\": \"int8\" runs a copy quantized once on first load (faster, a quarter of the memory)."],
    }


def _openai(model_dir: Path | None, llm_base_url: str | None) -> tuple[dict[str, Any], dict[str, Any], dict[str, list[str]]]:
    llm: dict[str, Any] = {"provider": "openai", "config": {"model": "gpt-4.1-mini"}}
    if llm_base_url:
        llm["config"]["base_url"] = llm_base_url
    return llm, {"provider": "openai", "config": {"model": "text-embedding-3-small"}}, {
        "llm": ["  // OpenAI; the key comes from $OPENAI_API_KEY (or put \"api_key\" here; it is never logged)."],
        "embedder": ["  // OpenAI embeddings, same key. A local embedder instead: {\"provider\": \"onnx\", \"config\": "
                     f"{json.dumps(DEFAULT_EMBEDDER)}}}"],
    }


def _ollama(model_dir: Path | None, llm_base_url: str | None) -> tuple[dict[str, Any], dict[str, Any], dict[str, list[str]]]:
    url = llm_base_url or "http://localhost:11434/v1"
    return {"provider": "ollama", "config": {"model": "llama3.1", "base_url": url}}, \
        {"provider": "openai", "config": {"base_url": url, "model": "nomic-embed-text", "dims": 768}}, {
        "llm": ["  // Ollama's OpenAI-compatible API (ollama pull llama3.1); any model that calls tools works."],
        "embedder": ["  // Ollama's embeddings through the same API (ollama pull nomic-embed-text, 768 dimensions)."],
    }


def _offline(model_dir: Path | None, llm_base_url: str | None) -> tuple[dict[str, Any], dict[str, Any], dict[str, list[str]]]:
    """Nothing to download and no network: the hashing embedder in-process, the fake model's address."""
    llm = {"provider": "openai_compatible", "config": {"base_url": llm_base_url or FAKE_LLM_URL, "model": "graphmem-fake"}}
    return llm, {"provider": "hashing"}, {
        "llm": ["  // The LLM that extracts facts and the graph (add without --no-infer). `graphmem fake-llm` serves a",
                "  // fake one at this address (offline; each message becomes one fact, --script FILE scripts graphs).",
                "  // A real model: `graphmem init --profile openai|ollama`, or the base_url and model of your server."],
        "embedder": ["  // The hashing embedder: in-process, nothing to download, lexical (words must match, not meanings).",
                     "  // Semantic search: `graphmem init --profile download` (a local model, downloaded once) or openai;",
                     "  // a store keeps the embedder it was built with, so give another embedder another data folder."],
    }


_PROFILE_PARTS = {"offline": _offline, "download": _download, "openai": _openai, "ollama": _ollama}


def add_parser(sub: Any) -> None:
    p = sub.add_parser("init", help="write a commented config file", description="Write a commented config file that every "
                       "graphmem command then finds (./graphmem.json, or $GRAPHMEM_HOME/config.json with --global). "
                       "Profiles: offline (nothing to download: the hashing embedder, the embedded store, the fake LLM of `graphmem fake-llm`), "
                       "download (the same with a local semantic embedder, downloaded once), openai, ollama.")
    p.add_argument("--profile", choices=PROFILES, default="offline", help="what the config uses (default offline)")
    p.add_argument("--global", dest="global_", action="store_true", help="write $GRAPHMEM_HOME/config.json instead of ./graphmem.json")
    p.add_argument("--output", type=Path, help="write this file instead")
    p.add_argument("--model-dir", type=Path, help="download profile: a local ONNX model folder instead of downloading the model")
    p.add_argument("--llm-base-url", help="the LLM's OpenAI-compatible base URL (offline and download default: graphmem fake-llm's)")
    p.add_argument("--data-dir", type=Path, help="where the store and history go (default $GRAPHMEM_HOME)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")


def run(ns: Any) -> int:
    from graphmem.config import MemoryConfig

    target = ns.output or (home() / "config.json" if ns.global_ else Path.cwd() / LOCAL_NAME)
    if target.exists() and not ns.force:
        raise InvalidInputError(f"{target} exists; pass --force to overwrite it")
    model_dir = ns.model_dir.expanduser().resolve() if ns.model_dir else None
    text = render(ns.profile, (ns.data_dir or home()).expanduser().resolve(), model_dir, ns.llm_base_url)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    MemoryConfig.load(read_config(target))  # what was written loads
    print(f"wrote {target} (profile {ns.profile})")
    if ns.profile in ("offline", "download"):
        print("next: `graphmem fake-llm` in another shell (the offline LLM), then e.g.\n"
              "  graphmem add \"I moved to Denver\" --user alice\n  graphmem search \"where do I live?\" --user alice",
              file=sys.stderr)
    return 0
