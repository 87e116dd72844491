"""torch.onnx's entry points, without the exporter: numbagrad cannot export to ONNX.

torch's exporter traces a model through torch's own dispatcher (torch.export), which numbagrad's
ops do not go through. Importing works, so a script that imports torch.onnx and exports only
on request runs; ``export`` and ``dynamo_export`` raise ``NotImplementedError`` when called.
To export, load the weights into the same model written in torch
(``numbagrad.utils.convert.to_torch_state_dict``) and export that.
"""

__all__ = ["OnnxExporterError", "dynamo_export", "export", "is_in_onnx_export",
           "register_custom_op_symbolic", "unregister_custom_op_symbolic"]

_UNSUPPORTED = ("numbagrad does not support ONNX export (torch.onnx.{name}): its ops do not "
                "run through torch's tracer. Load the state_dict into the torch version of "
                "the model (numbagrad.utils.convert.to_torch_state_dict) and export that.")


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter (never raised here: there is no exporter).

    Same as ``torch.onnx.OnnxExporterError``.
    """


def export(model, args=(), f=None, *, kwargs=None, **options):
    """Export ``model`` to ONNX: raises ``NotImplementedError``, numbagrad has no exporter.

    Same signature as ``torch.onnx.export``.
    """
    raise NotImplementedError(_UNSUPPORTED.format(name="export"))


def dynamo_export(model, /, *model_args, export_options=None, **model_kwargs):
    """Export ``model`` to ONNX (torch's older API): raises ``NotImplementedError``.

    Same signature as the ``torch.onnx.dynamo_export`` of older torch versions (2.13 has none).
    """
    raise NotImplementedError(_UNSUPPORTED.format(name="dynamo_export"))


def is_in_onnx_export():
    """Whether an ONNX export is running: never, numbagrad has no exporter.

    Same as ``torch.onnx.is_in_onnx_export``.
    """
    return False


def register_custom_op_symbolic(symbolic_name, symbolic_fn, opset_version):
    """Register an op's ONNX translation: raises ``NotImplementedError``, there is no exporter.

    Same signature as ``torch.onnx.register_custom_op_symbolic``.
    """
    raise NotImplementedError(_UNSUPPORTED.format(name="register_custom_op_symbolic"))


def unregister_custom_op_symbolic(symbolic_name, opset_version):
    """Remove an op's ONNX translation: raises ``NotImplementedError``, there is no exporter.

    Same signature as ``torch.onnx.unregister_custom_op_symbolic``.
    """
    raise NotImplementedError(_UNSUPPORTED.format(name="unregister_custom_op_symbolic"))
