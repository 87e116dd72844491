"""ExponentialFamily (torch.distributions.exp_family): densities
p(x; theta) = exp(<t(x), theta> - F(theta) + k(x)); subclasses give the natural parameters
theta, the log normalizer F and E[k(x)], and get entropy (and, in kl_more, the KL between two
of the same family) from F's gradient, the Bregman divergence torch uses."""

from ..autograd.api import grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base of the exponential-family distributions (Normal, Gamma, Bernoulli ...).

    Args:
        batch_shape: the shape of the independent parameter sets (default ()).
        event_shape: the shape of one draw (default ()).
        validate_args: whether to check the arguments and samples (default None: the
            global setting).
    """

    @property
    def _natural_params(self):
        """The natural parameters, a tuple of Tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """The log normalizer F, as a function of the natural parameters."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """E[k(x)], the expected carrier measure."""
        raise NotImplementedError

    def entropy(self):
        """H = F(theta) - <theta, grad F(theta)> - E[k(x)]."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for p, g in zip(nparams, gradients):
            result = result - (p * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
