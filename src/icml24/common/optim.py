"""Adam on one flat buffer: the numbers of ``torch.optim.Adam`` on the CPU, a fraction of its time on small networks.

A small network (a few 100 x 100 layers) spends most of an Adam step outside arithmetic: ``torch.optim.Adam``'s
single-tensor path launches seven element-wise kernels per parameter tensor, behind the optimizer's wrappers
(profiling hooks, dynamo guards, the grad-mode switch). :class:`FlatAdam` moves every parameter and its gradient
into one contiguous buffer each (the parameters become views of it; autograd accumulates into the gradient views in
place) and runs the same seven kernels once over the whole buffer. Element-wise kernels compute each element alone,
so the result is bit-for-bit the single-tensor path's (``tests/test_common_optim.py`` trains against it), which is
torch's default on the CPU. ``torch.optim.Adam(foreach=True)``, torch's default on CUDA, is not: it folds the bias
corrections into different operations, so on a GPU the numbers differ from torch's default in the last bits.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

__all__ = ["FlatAdam"]


class FlatAdam:
    """Adam (Kingma & Ba, ICLR 2015, Algorithm 1) with L2 weight decay (added to the gradient, as
    ``torch.optim.Adam(weight_decay=...)``) or decoupled weight decay (AdamW, Loshchilov & Hutter 2019, as
    ``torch.optim.AdamW``), in the operation order of torch's single-tensor path, over one flat buffer.

    Construct it before anything else holds the parameters' storage (the parameters' ``.data`` is moved into
    the buffer, their ``.grad`` becomes a view of the gradient buffer). Call :meth:`zero_grad` before each
    ``backward`` (it zeroes the buffer; the gradients must accumulate into it, so ``backward(create_graph=True)``
    is refused at the next :meth:`step`, as is a parameter whose ``.data`` was rebound).

    Limits: the numbers equal torch's where every parameter is in every step's graph (torch skips a parameter
    whose gradient is None; here its gradient is zero, so its moments decay and earlier momentum moves it); a
    parameter pickled alone carries the whole buffer; parameters without ``requires_grad`` are left out for good.
    """

    def __init__(self, params: Iterable[torch.Tensor], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, decoupled: bool = False):
        self.params = [p for p in params if p.requires_grad]
        if not self.params:
            raise ValueError("FlatAdam: no parameter requires a gradient")
        first = self.params[0]
        if any(p.dtype != first.dtype or p.device != first.device for p in self.params):
            raise ValueError("FlatAdam: every parameter must share one dtype and device")
        if len({id(p) for p in self.params}) != len(self.params):
            raise ValueError("FlatAdam: a parameter is listed twice")
        n = sum(p.numel() for p in self.params)
        self.flat = torch.empty(n, dtype=first.dtype, device=first.device)     # (n,) every parameter, in order
        self.grad = torch.zeros_like(self.flat)                                 # (n,) their gradients
        offset, self._grad_ptrs, self._data_ptrs = 0, [], []
        for p in self.params:
            k = p.numel()
            self.flat[offset:offset + k].copy_(p.detach().reshape(-1))
            p.data = self.flat[offset:offset + k].view_as(p)
            p.grad = view = self.grad[offset:offset + k].view_as(p)
            self._grad_ptrs.append(view.data_ptr())
            self._data_ptrs.append(p.data_ptr())
            offset += k
        self.exp_avg = torch.zeros_like(self.flat)                              # (n,) m_t
        self.exp_avg_sq = torch.zeros_like(self.flat)                           # (n,) v_t
        self.lr, (self.beta1, self.beta2), self.eps = lr, betas, eps
        self.weight_decay, self.decoupled = weight_decay, decoupled
        self.t = 0

    def zero_grad(self) -> None:
        """Zero the gradient buffer (every parameter's ``.grad``)."""
        self.grad.zero_()

    @torch.no_grad()
    def step(self) -> None:
        """One Adam step on every parameter (the operations and their order of torch's ``_single_tensor_adam``)."""
        if any(p.grad is None or p.grad.data_ptr() != g or p.data_ptr() != d
               for p, g, d in zip(self.params, self._grad_ptrs, self._data_ptrs)):
            raise RuntimeError("FlatAdam: a parameter or its gradient left the flat buffer (zero_grad(set_to_none="
                               "True), a create_graph backward, .to(), or an assignment to .grad or .data)")
        self.t += 1
        grad = self.grad
        if self.weight_decay:
            if self.decoupled:
                self.flat.mul_(1 - self.lr * self.weight_decay)                # AdamW: theta <- theta (1 - lr lambda)
            else:
                grad = grad.add(self.flat, alpha=self.weight_decay)             # g <- g + lambda theta
        self.exp_avg.lerp_(grad, 1 - self.beta1)                                # m_t = b1 m_{t-1} + (1 - b1) g_t
        self.exp_avg_sq.mul_(self.beta2).addcmul_(grad, grad, value=1 - self.beta2)  # v_t = b2 v_{t-1} + (1 - b2) g_t^2
        step = float(self.t)
        step_size = self.lr / (1 - self.beta1 ** step)                          # lr / (1 - b1^t)
        denom = (self.exp_avg_sq.sqrt() / (1 - self.beta2 ** step) ** 0.5).add_(self.eps)  # sqrt(v_t / (1 - b2^t)) + eps
        self.flat.addcdiv_(self.exp_avg, denom, value=-step_size)               # theta_t = theta_{t-1} - step m_t / denom
