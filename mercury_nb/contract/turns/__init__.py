"""Turn endings: how a stream ended, the assembled reply, the verdict, and the one router."""
