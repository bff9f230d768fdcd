"""Kernel glue: the %%mercury magic and scheduling agent tasks on the kernel's loop."""
