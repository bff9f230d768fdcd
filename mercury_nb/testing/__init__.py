"""Fakes that ship in the package: a scripted model, a loopback OpenAI-protocol server, and
the replay of recorded traffic on both."""

from mercury_nb.testing.collect import CollectedStream, collect_stream
from mercury_nb.testing.loopback_server import LoopbackServer, llama_cpp_props
from mercury_nb.testing.replay import (
    Recording,
    ReplayModel,
    RequestShape,
    load_recording,
    replay_server,
)
from mercury_nb.testing.script import (
    AUTO,
    DropMidStream,
    Endless,
    Fault,
    HttpError,
    MalformedChunk,
    MalformedChunkError,
    NoFinish,
    Stall,
    ToolCallSpec,
    Trickle,
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
    "Endless",
    "Fault",
    "HttpError",
    "LoopbackServer",
    "MalformedChunk",
    "MalformedChunkError",
    "NoFinish",
    "Recording",
    "ReplayModel",
    "RequestShape",
    "ScriptExhausted",
    "ScriptedModel",
    "Stall",
    "ToolCallSpec",
    "Trickle",
    "Turn",
    "call",
    "collect_stream",
    "get_scripted_model",
    "llama_cpp_props",
    "load_recording",
    "register_scripted_model",
    "replay_server",
    "scripted",
    "unregister_scripted_model",
]
