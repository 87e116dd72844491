"""L-BFGS (torch.optim.LBFGS), with torch's optional strong-Wolfe line search.

A port of torch/optim/lbfgs.py onto flat NumPy vectors: the flat gradient, the direction and
the history are arrays of the parameters' dtype, and the scalars torch keeps as 0-d tensors
(``ys``, ``ro``, ``al``, ``H_diag``, ``gtd``, the first step length) are NumPy scalars of that
dtype, so float32 problems round where torch's do. The parameters are moved in place by one
kernel call per update (``_kernels.add_scaled``); the two-loop recursion is one kernel call
over the history vectors where they are (their addresses).
"""

import numpy as np

from ..core.grad_mode import enable_grad
from ..mutation import _bump_version
from ..tensor import Tensor, _make
from . import _kernels
from .optimizer import Optimizer, _Call, _to_scalar, _use_grad

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    # Compute bounds of interpolation area
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    # Most common case: cubic interpolation of 2 points w/ function and derivative values for
    # both (see torch/optim/lbfgs.py)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    d_norm = np.abs(d).max()
    g = g.copy()
    # evaluate objective and gradient using initial step
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)

    # bracket an interval containing a point satisfying the Wolfe criteria
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        # check conditions
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket = [t_prev, t]
            bracket_f = [f_prev, f_new]
            bracket_g = [g_prev, g_new.copy()]
            bracket_gtd = [gtd_prev, gtd_new]
            break

        if abs(gtd_new) <= -c2 * gtd:
            bracket = [t]
            bracket_f = [f_new]
            bracket_g = [g_new]
            done = True
            break

        if gtd_new >= 0:
            bracket = [t_prev, t]
            bracket_f = [f_prev, f_new]
            bracket_g = [g_prev, g_new.copy()]
            bracket_gtd = [gtd_prev, gtd_new]
            break

        # interpolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))

        # next step
        t_prev = tmp
        f_prev = f_new
        g_prev = g_new.copy()
        gtd_prev = gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

    # reached max number of iterations?
    if ls_iter == max_ls:
        bracket = [0, t]
        bracket_f = [f, f_new]
        bracket_g = [g, g_new]

    # zoom phase: we now have a point satisfying the criteria, or a bracket around it. We
    # refine the bracket until we find the exact point satisfying the criteria
    insuf_progress = False
    # find high and low points in bracket
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        # line-search bracket is so small
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break

        # compute new trial value
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1],
                               bracket_f[1], bracket_gtd[1])

        # test that we are making sufficient progress
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            # interpolation close to boundary
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                # evaluate at 0.1 away from boundary
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False

        # Evaluate new point
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # Armijo condition not satisfied or not lower than lowest point
            bracket[high_pos] = t
            bracket_f[high_pos] = f_new
            bracket_g[high_pos] = g_new.copy()
            bracket_gtd[high_pos] = gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                # Wolfe conditions satisfied
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                # old high becomes new low
                bracket[high_pos] = bracket[low_pos]
                bracket_f[high_pos] = bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]

            # new point becomes new low
            bracket[low_pos] = t
            bracket_f[low_pos] = f_new
            bracket_g[low_pos] = g_new.copy()
            bracket_gtd[low_pos] = gtd_new

    # return stuff
    t = bracket[low_pos]
    f_new = bracket_f[low_pos]
    g_new = bracket_g[low_pos]
    return f_new, g_new, t, ls_func_evals


def _value(x):
    """A state entry as the step uses it: arrays and NumPy scalars for tensors."""
    if isinstance(x, Tensor):
        return x._array() if x.ndim else np.asarray(x._data)[()]
    return x


def _tensor(x):
    """A NumPy value of the step as the state entry torch would hold (a tensor)."""
    if isinstance(x, np.ndarray):
        return _make(x)
    if isinstance(x, np.generic):
        return _make(np.asarray(x))
    return x


class LBFGS(Optimizer):
    """L-BFGS as torch.optim.LBFGS (one parameter group; ``step`` needs a closure)."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _dtype(self):
        dts = {p._data.dtype for p in self._params}
        if len(dts) != 1:
            raise NotImplementedError("numbagrad.optim.LBFGS: all parameters must have the "
                                      "same dtype")
        return dts.pop()

    def _sizes(self):
        return np.array([p._data.size for p in self._params], np.int64)

    def _gather_flat_grad(self):
        dt = self._dtype()
        call = _Call(dt)
        sizes = self._sizes()
        addrs = np.array([0 if p._grad is None else call.address(p._grad._array(), n, False)
                          for p, n in zip(self._params, sizes)], np.int64)
        out = np.empty(int(sizes.sum()), dt)
        _kernels.gather(addrs, sizes, out)
        return out

    def _param_call(self, kernel, *args):
        """Run ``kernel(addresses, sizes, *args)`` on the parameters' arrays, in place."""
        call = _Call(self._dtype())
        sizes = self._sizes()
        addrs = call.addresses(self._params, sizes, True)
        kernel(addrs, sizes, *args)
        call.finish()
        for p in self._params:
            _bump_version(p)

    def _add_grad(self, step_size, update):
        if update.shape[0] != self._numel():
            raise AssertionError(f"Expected offset {update.shape[0]} to equal {self._numel()}")
        self._param_call(_kernels.add_scaled, np.array([step_size], update.dtype), update)

    def _clone_param(self):
        call = _Call(self._dtype())
        sizes = self._sizes()
        out = np.empty(int(sizes.sum()), call.dt)
        _kernels.gather(call.addresses(self._params, sizes, False), sizes, out)
        return out

    def _set_param(self, params_data):
        self._param_call(_kernels.scatter, params_data)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    @_use_grad
    def step(self, closure):
        """Perform a single optimization step.

        Args:
            closure (Callable): A closure that reevaluates the model and returns the loss.
        """
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got "
                                 f"{len(self.param_groups)}")
        closure = enable_grad()(closure)

        group = self.param_groups[0]
        lr = _to_scalar(group["lr"])
        max_iter = group["max_iter"]
        max_eval = group["max_eval"]
        tolerance_grad = group["tolerance_grad"]
        tolerance_change = group["tolerance_change"]
        line_search_fn = group["line_search_fn"]
        history_size = group["history_size"]

        # NOTE: LBFGS has only global state, but we register it as state for the first param,
        # because this helps with casting in load_state_dict
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        # evaluate initial f(x) and df/dx
        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        opt_cond = np.abs(flat_grad).max() <= tolerance_grad

        # optimal condition
        if opt_cond:
            return orig_loss

        # tensors cached in state (for tracing); the history stays a list of tensors, as in
        # torch's state, with the arrays (and their addresses) alongside for the kernel
        d = _value(state.get("d"))
        t = _value(state.get("t"))
        old_dirs = state.get("old_dirs")
        old_stps = state.get("old_stps")
        ro = state.get("ro")
        h_diag = _value(state.get("H_diag"))
        prev_flat_grad = _value(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")
        dt = flat_grad.dtype
        call = _Call(dt)
        if old_dirs is not None:
            n = flat_grad.shape[0]
            y_addr = [call.address(v._array(), n, False) for v in old_dirs]
            s_addr = [call.address(v._array(), n, False) for v in old_stps]
            ro_val = [_value(r) for r in ro]

        n_iter = 0
        # optimize for a max of max_iter iterations
        while n_iter < max_iter:
            # keep track of nb of iterations
            n_iter += 1
            state["n_iter"] += 1

            # compute gradient descent direction
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                y_addr, s_addr, ro_val = [], [], []
                h_diag = 1
            else:
                # do lbfgs update (update memory)
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)  # y*s
                if ys > 1e-10:
                    # updating memory
                    if len(old_dirs) == history_size:
                        # shift history by one (limited-memory)
                        for lst in (old_dirs, old_stps, ro, y_addr, s_addr, ro_val):
                            lst.pop(0)

                    # store new direction/step
                    r = 1.0 / ys
                    old_dirs.append(_make(y))
                    old_stps.append(_make(s))
                    ro.append(_make(np.asarray(r)))
                    y_addr.append(call.address(y, y.shape[0], False))
                    s_addr.append(call.address(s, s.shape[0], False))
                    ro_val.append(r)

                    # update scale of initial Hessian approximation
                    h_diag = ys / y.dot(y)  # (y*y)

                # compute the approximate (L-BFGS) inverse Hessian multiplied by the gradient
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = np.zeros(len(old_dirs), dt)
                d = _kernels.two_loop(flat_grad, np.array(y_addr, np.int64),
                                      np.array(s_addr, np.int64), np.array(ro_val, dt), al,
                                      dt.type(h_diag))
                al_list = state["al"]
                for i in range(min(len(al), len(al_list))):
                    al_list[i] = _make(np.asarray(al[i]))

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                np.copyto(prev_flat_grad, flat_grad)
            prev_loss = loss

            # compute step length
            # reset initial guess for step size
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr

            # directional derivative
            gtd = flat_grad.dot(d)  # g * d

            # directional derivative is below tolerance
            if gtd > -tolerance_change:
                break

            # optional line search: user function
            ls_func_evals = 0
            if line_search_fn is not None:
                # perform line search, using user function
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                # no line search, simply move with fixed-step
                self._add_grad(t, d)
                if n_iter != max_iter:
                    # re-evaluate function only if not in last iteration; in a stochastic
                    # setting there's no use re-evaluating that function here
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1

            # update func eval
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # check conditions
            if n_iter == max_iter:
                break
            if current_evals >= max_eval:
                break
            # optimal condition
            if opt_cond:
                break
            # lack of progress
            if np.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"] = _tensor(d)
        state["t"] = _tensor(t)
        state["old_dirs"] = old_dirs
        state["old_stps"] = old_stps
        state["ro"] = ro
        state["H_diag"] = _tensor(h_diag)
        prev = state.get("prev_flat_grad")
        if not (isinstance(prev, Tensor) and prev._data is prev_flat_grad):
            state["prev_flat_grad"] = _tensor(prev_flat_grad)
        state["prev_loss"] = prev_loss

        return orig_loss
