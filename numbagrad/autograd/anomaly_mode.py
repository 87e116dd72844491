"""torch.autograd.anomaly_mode: the anomaly-detection switches under their module's name."""

from .anomaly import detect_anomaly, set_detect_anomaly

__all__ = ["detect_anomaly", "set_detect_anomaly"]
