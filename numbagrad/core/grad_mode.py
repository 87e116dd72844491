"""no_grad / enable_grad / set_grad_enabled: thread-local context managers and decorators."""

import functools
import threading


class _State(threading.local):
    enabled = True
    inference = False  # inside an inference_mode() block (is_inference_mode_enabled)


state = _State()


def is_grad_enabled():
    """Whether ops are recorded for autograd here (no ``no_grad`` block in effect).

    Same as ``torch.is_grad_enabled``.
    """
    return state.enabled


class _GradMode:
    """Base for the three switches; ``_target`` is the mode inside the block."""

    _target = True

    def __enter__(self):
        self._prev = state.enabled
        state.enabled = self._target

    def __exit__(self, *exc):
        state.enabled = self._prev
        return False

    def __call__(self, fn):
        target = self._target

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            prev = state.enabled
            state.enabled = target
            try:
                return fn(*args, **kwargs)
            finally:
                state.enabled = prev

        return wrapper


class no_grad(_GradMode):  # noqa: N801 - torch's name
    """Context manager (and decorator) that records no op for autograd in its block.

    Same as ``torch.no_grad``.

    Examples:
        >>> import numbagrad as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> with torch.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    _target = False


class enable_grad(_GradMode):  # noqa: N801
    """Context manager (and decorator) that records ops again inside a ``no_grad`` block.

    Same as ``torch.enable_grad``.
    """

    _target = True


class set_grad_enabled(_GradMode):  # noqa: N801
    """Switch recording for autograd on or off: at once, or for a ``with`` block.

    Same as ``torch.set_grad_enabled``.
    """

    def __init__(self, mode=True):
        # torch switches immediately, so that a plain call (not a with block) works too
        self._prev = state.enabled
        self._target = bool(mode)
        state.enabled = self._target

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.enabled = self._prev
        return False

    def __call__(self, fn):
        # as a decorator the switch applies inside fn only, as torch restores it here
        state.enabled = self._prev
        return super().__call__(fn)


class inference_mode(no_grad):  # noqa: N801 - recorded nothing, as no_grad
    """Context manager (and decorator) that records no op for autograd, as ``no_grad``.

    Same as ``torch.inference_mode``.
    """

    def __init__(self, mode=True):
        self._target = not mode
        self._mode = bool(mode)

    def __enter__(self):
        self._prev_inference = state.inference
        state.inference = self._mode
        super().__enter__()

    def __exit__(self, *exc):
        state.inference = self._prev_inference
        return super().__exit__(*exc)

    def __call__(self, fn):
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)
        return wrapper


def is_inference_mode_enabled():
    """Whether an ``inference_mode()`` block is in effect here.

    Same as ``torch.is_inference_mode_enabled``.
    """
    return state.inference
