"""Fakes that ship in the package: a scripted model and a loopback OpenAI-protocol server."""

from mercury_nb.testing.collect import CollectedStream, collect_stream
from mercury_nb.testing.loopback_server import LoopbackServer, llama_cpp_props
from mercury_nb.testing.script import (
    AUTO,
    DropMidStream,
    Fault,
    HttpError,
    MalformedChunk,
    MalformedChunkError,
    NoFinish,
    Stall,
    ToolCallSpec,
    Turn,
    call,
)
from mercury_nb.testing.scripted_model import (
    ScriptedModel,
    ScriptExhausted,
    get_scripted_model,
    register_scripted_model,
    scripted,
    unregister_scripted_model,
)

__all__ = [
    "AUTO",
    "CollectedStream",
    "DropMidStream",
    "Fault",
    "HttpError",
    "LoopbackServer",
    "MalformedChunk",
    "MalformedChunkError",
    "NoFinish",
    "ScriptExhausted",
    "ScriptedModel",
    "Stall",
    "ToolCallSpec",
    "Turn",
    "call",
    "collect_stream",
    "get_scripted_model",
    "llama_cpp_props",
    "register_scripted_model",
    "scripted",
    "unregister_scripted_model",
]
