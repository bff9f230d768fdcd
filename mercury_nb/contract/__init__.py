"""The pure decision core: no I/O, no asyncio, no clock; state in, decision out."""
