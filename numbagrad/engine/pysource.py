"""The source of one Python function written at run time (a graph's backward written out,
a compiled float32 plan): its body's lines and the objects its names are bound to."""


class Source:
    """A function's body, line by line, and the names its lines use (``env``)."""

    def __init__(self, **env):
        self.lines = []
        self.env = env

    def bind(self, name, obj):
        """Name ``obj`` for the body's lines; returns the name."""
        self.env[name] = obj
        return name

    def add(self, *lines):
        self.lines += ["    " + line for line in lines]

    def function(self, signature, filename):
        """The function ``def <signature>:`` with this body, compiled (``filename`` names it
        in tracebacks); its text is its ``source`` attribute."""
        text = f"def {signature}:\n" + "\n".join(self.lines) + "\n"
        exec(compile(text, filename, "exec"), self.env)
        fn = self.env[signature.split("(")[0]]
        fn.source = text
        return fn
