"""Tools the model calls: files, commands and notebooks, all confined to the workspace."""
