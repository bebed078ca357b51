"""The ``graphmem`` command (an interface over the facade).

``main`` parses the command line and calls :class:`graphmem.Memory`; ``lifecycle`` holds the
data-lifecycle commands, ``demo`` the offline demo, ``doctor`` the model checks, ``init_config``
the config file it writes and finds. May import anything below it; nothing imports ``cli``.
"""
