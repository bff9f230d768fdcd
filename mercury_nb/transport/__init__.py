"""Model transports: the litellm adapter, the model factory and the chat-model protocol."""
