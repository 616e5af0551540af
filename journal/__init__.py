"""jaiweb's functional core: the Session Journal tree and the Operation Journal's recovery.

Pure Python and pydantic: no Django, no I/O, no clock, no randomness. Ids and
timestamps come in as arguments; the shell loads rows, calls these functions and
appends what they return.
"""
