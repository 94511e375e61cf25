"""C text shared by the C targets: the Jinja environment, function bodies, inline trig."""
