"""Neurons and the recurrent spiking network of "Balanced Resonate-and-Fire Neurons" (Higuchi et al., 2024).

Equation labels follow Sec. 3 of arXiv 2402.14603 as read for this project (RF dynamics and Euler step
"Eq. 3", spike "Eq. 4", divergence boundary p(omega) "Eq. 6", refractory period "Eq. 7", smooth reset
"Eq. 8"); they were not re-checked against the PMLR version, the formulas were checked against the
official code. Time step ``DT`` = 0.01 and threshold ``THETA`` = 1 as in the paper and the official code.

The network is the paper's single-layer RSNN: the hidden cell receives ``concat(x_t, z_{t-1})`` through one
bias-free Linear layer (Xavier-uniform init), and a leaky-integrator (LI) readout integrates the hidden
spikes. :class:`RSNN` runs it fast (input projection hoisted out of the time loop, constants computed
once, the BRF/RF and ALIF layers as whole-sequence functions with hand-written BPTT backwards:
:func:`resonator_layer`, :func:`alif_layer`); :func:`reference_forward` is the plain per-step
formulation (concat + Linear + cell every step, the official code's structure) and must agree with it (tested).
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple, cast

import numpy as np
import torch
from torch import nn

from icml24.papers.brf import kernels

DT = 0.01  # delta: Euler time step
THETA = 1.0  # theta: RF / BRF firing threshold
REFRACTORY_DECAY = 0.9  # gamma: decay of the refractory variable q (Eq. 7)
ALIF_THETA0 = 0.01  # ALIF base threshold
ALIF_BETA = 1.8  # ALIF adaptation strength
Neuron = Literal["brf", "rf", "alif"]
Kernel = Literal["auto", "numba", "torch"]

# double-Gaussian surrogate (official constants): h(x) = gamma [(1+p) N(x; 0, s) - 2p N(x; 0, k s)]
_SG_P, _SG_SIGMA, _SG_SCALE, _SG_GAMMA = 0.15, 0.5, 6.0, 0.5


def double_gaussian(x: torch.Tensor, inplace: bool = False) -> torch.Tensor:
    """Surrogate derivative of the Heaviside spike: h(x) = 0.5 [1.15 N(x; 0, 0.5) - 0.3 N(x; 0, 3)].

    The paper's "double Gaussian" pseudo-derivative (Sec. 4, following Yin et al. 2021); positive near 0,
    slightly negative in the tails. Any shape (elementwise); computed as c1 exp(-x^2/(2 s1^2)) -
    c2 exp(-x^2/(2 s2^2)) with one shared x^2; ``inplace`` overwrites x with h(x) (the same operations, one
    temporary instead of three: the fused layers apply it to whole (T, B, H) buffers).

    >>> round(float(double_gaussian(torch.tensor(0.0))), 4)   # 0.5 (1.15 * 0.7979 - 0.3 * 0.1330)
    0.4388
    """
    s1, s2 = _SG_SIGMA, _SG_SCALE * _SG_SIGMA
    c1 = _SG_GAMMA * (1 + _SG_P) / (s1 * math.sqrt(2 * math.pi))
    c2 = _SG_GAMMA * 2 * _SG_P / (s2 * math.sqrt(2 * math.pi))
    if inplace:
        x2 = x.mul_(x)
        tail = torch.mul(x2, -0.5 / s2 ** 2).exp_()
        return x2.mul_(-0.5 / s1 ** 2).exp_().mul_(c1).sub_(tail, alpha=c2)
    x2 = x * x
    return torch.exp(x2 * (-0.5 / s1 ** 2)).mul_(c1).sub_(torch.exp(x2 * (-0.5 / s2 ** 2)), alpha=c2)


class _SpikeFn(torch.autograd.Function):
    """Heaviside forward, :func:`double_gaussian` backward."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return (x > 0).to(x.dtype)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return grad * double_gaussian(x)


def spike(x: torch.Tensor) -> torch.Tensor:
    """Spike z = H(x) (Eq. 4) with the double-Gaussian surrogate gradient dz/dx := h(x).

    >>> spike(torch.tensor([-0.5, 0.0, 0.2]))
    tensor([0., 0., 1.])
    """
    return _SpikeFn.apply(x)


def divergence_boundary(omega: torch.Tensor, dt: float = DT) -> torch.Tensor:
    """p(omega) = (-1 + sqrt(1 - (dt omega)^2)) / dt (Eq. 6): the largest damping b with |1 + dt(b + i omega)| <= 1.

    At b = p(omega) the Euler-discretized oscillator neither grows nor decays; below it, it decays.
    Formulation choice: (dt omega)^2 is clamped to 1, so |omega| >= 1/dt gives p = -1/dt instead of NaN
    (the official code returns NaN there); no b can then keep the modulus <= 1 (it is >= dt|omega| > 1).

    >>> divergence_boundary(torch.tensor([0.0, 60.0]))   # (-1 + 0.8) / 0.01 = -20
    tensor([  0., -20.])
    """
    return (-1 + torch.sqrt(1 - torch.clamp((dt * omega) ** 2, max=1.0))) / dt


def euler_modulus(b: torch.Tensor, omega: torch.Tensor, dt: float = DT) -> torch.Tensor:
    """|1 + dt (b + i omega)|: the per-step growth factor of the free RF oscillator (Eq. 3 with I = 0).

    >>> euler_modulus(torch.tensor(0.0), torch.tensor(0.0))
    tensor(1.)
    """
    return torch.sqrt((1 + dt * b) ** 2 + (dt * omega) ** 2)


class BRFState(NamedTuple):
    """State of a BRF / RF layer at one step, each (batch, hidden): spike z, real u, imaginary v, refractory q."""

    z: torch.Tensor
    u: torch.Tensor
    v: torch.Tensor
    q: torch.Tensor


def brf_step(current: torch.Tensor, state: BRFState, omega: torch.Tensor, b_offset: torch.Tensor,
             dt: float = DT, theta: float = THETA) -> BRFState:
    """One BRF step (Eq. 3, 4, 6-8) from the previous state and the input current I_t, shapes (B, H).

        b_t = p(omega) - b_offset - q_{t-1}                          (smooth reset, Eq. 8)
        u_t = u + dt (b_t u - omega v + I_t),  v_t = v + dt (omega u + b_t v)    (Eq. 3)
        z_t = H(u_t - theta - q_{t-1})                               (refractory threshold, Eq. 7)
        q_t = 0.9 q_{t-1} + z_t

    ``omega`` and ``b_offset`` are the non-negative values (callers pass |omega|, |b_offset|), shape (H,).

    >>> s = BRFState(*(torch.zeros(1, 1) for _ in range(4)))
    >>> s = brf_step(torch.tensor([[200.0]]), s, torch.tensor([10.0]), torch.tensor([0.5]))
    >>> [round(float(t), 4) for t in s]    # u = 0.01 * 200 = 2 > 1 spikes; v uses the old u = 0
    [1.0, 2.0, 0.0, 1.0]
    """
    b = divergence_boundary(omega, dt) - b_offset - state.q
    u = state.u + dt * (b * state.u - omega * state.v + current)
    v = state.v + dt * (omega * state.u + b * state.v)
    z = spike(u - theta - state.q)
    return BRFState(z, u, v, REFRACTORY_DECAY * state.q + z)


def rf_step(current: torch.Tensor, state: BRFState, omega: torch.Tensor, b_offset: torch.Tensor,
            dt: float = DT, theta: float = THETA) -> BRFState:
    """One vanilla RF step: Eq. 3 with constant b = -b_offset, spike z = H(u_t - theta), no reset, q unused (0).

    >>> s = BRFState(*(torch.zeros(1, 1) for _ in range(4)))
    >>> [round(float(t), 4) for t in rf_step(torch.tensor([[50.0]]), s, torch.tensor([10.0]), torch.tensor([0.5]))]
    [0.0, 0.5, 0.0, 0.0]
    """
    b = -b_offset
    u = state.u + dt * (b * state.u - omega * state.v + current)
    v = state.v + dt * (omega * state.u + b * state.v)
    return BRFState(spike(u - theta), u, v, state.q)


class ALIFState(NamedTuple):
    """State of an ALIF layer, each (batch, hidden): spike z, membrane u, adaptation a."""

    z: torch.Tensor
    u: torch.Tensor
    a: torch.Tensor


def alif_step(current: torch.Tensor, state: ALIFState, alpha: torch.Tensor, rho: torch.Tensor) -> ALIFState:
    """One step of the authors' ALIF baseline (Yin et al. 2021 form), shapes (B, H):

        a_t = rho a + (1 - rho) z_{t-1},  threshold_t = 0.01 + 1.8 a_t
        u_t = alpha u + (1 - alpha) I_t,  z_t = H(u_t - threshold_t),  u_t <- u_t - z_t threshold_t (soft reset)

    >>> s = ALIFState(torch.ones(1, 1), torch.zeros(1, 1), torch.zeros(1, 1))
    >>> [round(float(t), 4) for t in alif_step(torch.tensor([[1.0]]), s, torch.tensor(0.5), torch.tensor(0.5))]
    [0.0, 0.5, 0.5]
    """
    a = rho * state.a + (1 - rho) * state.z
    threshold = ALIF_THETA0 + ALIF_BETA * a
    u = alpha * state.u + (1 - alpha) * current
    z = spike(u - threshold)
    return ALIFState(z, u - z * threshold, a)


def _compiled(kernel: Kernel, drive: torch.Tensor, smooth: bool) -> bool:
    """Whether a fused layer runs the numba kernels: ``numba`` (CPU tensors only), ``torch`` or ``auto``."""
    if kernel not in ("auto", "numba", "torch"):
        raise ValueError(f"unknown kernel {kernel!r}; use auto, numba or torch")
    if kernel == "numba" and (drive.device.type != "cpu" or smooth):
        raise ValueError("the numba kernels run CPU tensors with the Heaviside spike (smooth=False) only")
    return kernel == "numba" or (kernel == "auto" and drive.device.type == "cpu" and not smooth)


_ALIGN = 64  # bytes: the alignment of torch's CPU allocations


def _np(*tensors: torch.Tensor) -> tuple[np.ndarray, ...]:
    """C-contiguous numpy views (no copies where already contiguous) of CPU tensors, outside autograd."""
    return tuple(t.detach().contiguous().numpy() for t in tensors)


def _buffers(like: torch.Tensor, n: int, compiled: bool) -> list[torch.Tensor]:
    """``n`` uninitialised contiguous tensors of the shape and dtype of ``like`` ((T, B, H) sequence buffers).
    For the numba kernels they are numpy allocations wrapped without a copy: numpy advises transparent huge
    pages for large arrays, which makes first touching them cheaper where the kernel's THP mode is ``madvise``
    (every train step allocates six or seven afresh; brf README). Each starts on a 64-byte boundary, as torch's
    allocations do, so that the BLAS calls that read them see the same alignment in every run."""
    if not compiled:
        return [like.new_empty(like.shape) for _ in range(n)]
    dtype = torch.empty(0, dtype=like.dtype).numpy().dtype
    size = like.numel() * dtype.itemsize
    out = []
    for _ in range(n):
        raw = np.empty(size + _ALIGN, np.uint8)
        start = -raw.ctypes.data % _ALIGN
        out.append(torch.from_numpy(raw[start:start + size].view(dtype).reshape(tuple(like.shape))))
    return out


def _slopes_(x: torch.Tensor, block: int = 8) -> torch.Tensor:
    """x -> :func:`double_gaussian` (x) in place on a (T, B, H) buffer, ``block`` steps at a time, so that its
    temporaries stay in cache instead of being a second (T, B, H) buffer; elementwise, so the values are those
    of one call on the whole buffer."""
    for t in range(0, x.shape[0], block):
        double_gaussian(x[t:t + block], inplace=True)
    return x


def _fire(x: torch.Tensor, smooth: bool, slope: torch.Tensor) -> torch.Tensor:
    """Spikes z = H(x) with the surrogate slope :func:`double_gaussian` (x) written into ``slope``, or with
    ``smooth`` a sigmoid and its exact derivative (the fused layers' gradcheck mode); (B, H) -> (B, H)."""
    if smooth:
        z = torch.sigmoid(x)
        torch.mul(z, 1 - z, out=slope)
        return z
    slope.copy_(double_gaussian(x))
    return (x > 0).to(x.dtype)


class _ALIFBPTT(torch.autograd.Function):
    """ALIF layer over a whole sequence with a hand-written BPTT backward (see :func:`alif_layer`).

    Forward stores, per step, the reset membrane u'_t, the adaptation a_t, the threshold theta_t, the spike
    z_t and the surrogate slope h(x_t); backward runs the adjoint recursion of :func:`alif_step` in reverse
    time without an autograd graph.
    """

    @staticmethod
    def forward(ctx, drive, w_rec, alpha, rho, smooth, compiled):
        T, B, H = drive.shape
        UR, A, TH, Z, S, I = _buffers(drive, 6, compiled)  # u'_t, a_t, theta_t, z_t, dz/dx, I_t: (T, B, H)
        if compiled:  # the recursion below as one numba loop (kernels.py), which leaves x_t in S
            kernels.alif_forward(*_np(drive, w_rec, alpha, rho), ALIF_THETA0, ALIF_BETA, *_np(I, UR, A, TH, Z, S))
            _slopes_(S)
        else:
            z = u = a = drive.new_zeros(B, H)
            for t in range(T):
                current = torch.addmm(drive[t], z, w_rec, out=I[t])                  # I_t = drive_t + z_{t-1} W
                a = torch.mul(a, rho, out=A[t]).addcmul_(1 - rho, z)                  # a_t = rho a + (1 - rho) z
                threshold = torch.mul(a, ALIF_BETA, out=TH[t]).add_(ALIF_THETA0)      # theta_t = 0.01 + 1.8 a_t
                u = torch.mul(u, alpha).addcmul_(1 - alpha, current)                  # u_t = alpha u' + (1 - alpha) I
                z = Z[t] = _fire(u - threshold, smooth, S[t])
                u = torch.sub(u, z * threshold, out=UR[t])                            # soft reset u'_t
        ctx.compiled = compiled
        ctx.save_for_backward(w_rec, alpha, rho, I, UR, A, TH, Z, S)
        return Z

    @staticmethod
    def backward(ctx, grad_z):
        w_rec, alpha, rho, I, UR, A, TH, Z, S = ctx.saved_tensors
        T, B, H = Z.shape
        (gI,) = _buffers(Z, 1, ctx.compiled)          # dL/dI_t (T, B, H)
        w_t = w_rec.t()
        if ctx.compiled:
            acc = np.zeros((2, H))                    # float64 accumulators of dL/dalpha, dL/drho over T x B terms
            kernels.alif_backward(*_np(grad_z, w_t, alpha, rho), ALIF_BETA, *_np(I, UR, A, TH, Z, S, gI), acc[0], acc[1])
            g_alpha, g_rho = (torch.from_numpy(v).to(grad_z.dtype) for v in acc)
        else:
            zeros = grad_z.new_zeros(B, H)
            gu_next = ga_next = zeros                 # dL/du_{t+1}, dL/da_{t+1} (total) from the future
            g_alpha = g_rho = grad_z.new_zeros(H)
            for t in range(T - 1, -1, -1):
                gur = alpha * gu_next                                                 # dL/du'_t
                gz = grad_z[t] + (1 - rho) * ga_next - gur * TH[t]
                if t < T - 1:
                    gz = gz + gI[t + 1] @ w_t                                         # via I_{t+1} = ... + z_t W
                gx = gz * S[t]
                gu = gur + gx                                                         # x_t = u_t - theta_t
                gth = -gx - gur * Z[t]                                                # u'_t = u_t - z_t theta_t
                ga = rho * ga_next + ALIF_BETA * gth
                torch.mul(gu, 1 - alpha, out=gI[t])
                u_prev = UR[t - 1] if t > 0 else zeros
                a_prev, z_prev = (A[t - 1], Z[t - 1]) if t > 0 else (zeros, zeros)
                g_alpha = g_alpha + (gu * (u_prev - I[t])).sum(0)                     # du_t / dalpha
                g_rho = g_rho + (ga * (a_prev - z_prev)).sum(0)                       # da_t / drho
                gu_next, ga_next = gu, ga
        g_w = Z[:-1].reshape(-1, H).t() @ gI[1:].reshape(-1, H)                       # sum_t z_{t-1}^T dI_t
        return gI, g_w, g_alpha, g_rho, None, None


def alif_layer(drive: torch.Tensor, w_rec: torch.Tensor, alpha: torch.Tensor, rho: torch.Tensor,
               smooth: bool = False, kernel: Kernel = "auto") -> torch.Tensor:
    """A whole ALIF layer over time (:func:`alif_step` for t = 1..T with I_t = drive_t + z_{t-1} w_rec),
    with a fused hand-written BPTT; the spike's derivative is :func:`double_gaussian` (``smooth=True``:
    a sigmoid with its exact derivative, for ``torch.autograd.gradcheck`` in the tests); ``kernel`` as in
    :func:`resonator_layer`.

    Args:
        drive: (T, B, H) input part of the current; w_rec: (H, H); alpha, rho: (H,) membrane and
            adaptation decays.
    Returns:
        (T, B, H) spikes z_t.

    >>> drive = torch.tensor([1.0, 0.0, 0.0]).view(3, 1, 1)          # u_1 = 0.5 > 0.01: a spike at t = 1
    >>> alif_layer(drive, torch.zeros(1, 1), torch.tensor([0.5]), torch.tensor([0.5]))[:, 0, 0]
    tensor([1., 0., 0.])
    """
    return _ALIFBPTT.apply(drive, w_rec, alpha, rho, smooth, _compiled(kernel, drive, smooth))


class _ResonatorBPTT(torch.autograd.Function):
    """BRF / RF layer over a whole sequence with a hand-written BPTT backward (see :func:`resonator_layer`).

    Forward stores, per step, u_t, v_t, z_t, the spike's surrogate slope h(x_t) and the damping factor
    a_t = 1 + dt b_t; backward is the adjoint recursion of Eq. 3, 7, 8 in reverse time, written with
    in-place fused ops (addcmul) and no autograd graph.
    """

    @staticmethod
    def forward(ctx, drive, w_rec, b_rest, omega, dt, theta, refractory, smooth, compiled):
        T, B, H = drive.shape
        U, V, Z, S, A = _buffers(drive, 5, compiled)  # (T, B, H); S: dz/dx, A: 1 + dt b_t
        a_rest, dt_omega = 1 + dt * b_rest, dt * omega  # (H,)
        if compiled:  # the recursion below as one numba loop (kernels.py), which leaves x_t in S
            kernels.resonator_forward(*_np(drive, w_rec, a_rest, dt_omega), dt, theta, refractory, REFRACTORY_DECAY,
                                      *_np(U, V, Z, S, A))
            _slopes_(S)
        else:
            u = v = q = z = drive.new_zeros(B, H)
            for t in range(T):
                current = torch.addmm(drive[t], z, w_rec)  # I_t
                a = torch.sub(a_rest, q, alpha=dt, out=A[t]) if refractory else A[t].copy_(a_rest.expand(B, H))
                # Eq. 3 with b_t = b_rest - q_{t-1} (Eq. 8): u_t = a u - dt w v + dt I,  v_t = a v + dt w u
                u_new = torch.mul(current, dt, out=U[t]).addcmul_(a, u).addcmul_(dt_omega, v, value=-1)
                v = torch.mul(a, v, out=V[t]).addcmul_(dt_omega, u)
                u = u_new
                x = u - q - theta if refractory else u - theta  # Eq. 7 / Eq. 4
                z = Z[t] = _fire(x, smooth, S[t])
                if refractory:
                    q = torch.add(z, q, alpha=REFRACTORY_DECAY)  # q_t = 0.9 q_{t-1} + z_t
        ctx.save_for_backward(w_rec, omega, U, V, Z, S, A)
        ctx.consts = (dt, refractory, compiled)
        return Z

    @staticmethod
    def backward(ctx, grad_z):
        w_rec, omega, U, V, Z, S, A = ctx.saved_tensors
        dt, refractory, compiled = ctx.consts
        T, B, H = Z.shape
        (dU,) = _buffers(Z, 1, compiled)  # total dL/du_t (T, B, H); the numba kernel leaves dt dL/du_t = dL/ddrive_t
        dt_omega, dt_w_rec_t = dt * omega, dt * w_rec.t()
        if compiled:  # dL/db_rest, dL/domega and dL/dw_rec (over dt) accumulated inside, in float64
            acc = np.zeros((2, H))
            acc_w = np.zeros((H, H))
            kernels.resonator_backward(*_np(grad_z, dt_w_rec_t, dt_omega), dt, refractory, REFRACTORY_DECAY,
                                       *_np(U, V, Z, S, A, dU), acc[0], acc[1], acc_w)
            g_b, g_omega = (torch.from_numpy(dt * v).to(grad_z.dtype) for v in acc)
            g_w = torch.from_numpy(dt * acc_w).to(grad_z.dtype)  # sum_t z_{t-1}^T dI_t, from the spikes
            return dU, g_w, g_b, g_omega, None, None, None, None, None
        dV = torch.empty_like(Z)  # total dL/dv_t
        au = av = aq = az = grad_z.new_zeros(B, H)  # dL/du_t, dL/dv_t, dL/dq_t, dL/dz_t (via I_{t+1}) from the future
        for t in range(T - 1, -1, -1):
            dz = grad_z[t] + az + aq if refractory else grad_z[t] + az  # q_t = 0.9 q_{t-1} + z_t reads z_t
            dx = dz.mul_(S[t])
            du = torch.add(au, dx, out=dU[t])
            dV[t] = av
            if refractory and t > 0:  # dL/dq_{t-1} = 0.9 dL/dq_t - dL/dx_t - dL/db_t, dL/db_t = dt (du u + dv v)_{t-1}
                db = torch.mul(du, U[t - 1]).addcmul_(av, V[t - 1])
                aq = torch.mul(aq, REFRACTORY_DECAY).sub_(dx).sub_(db, alpha=dt)
            au, av = (torch.mul(du, A[t]).addcmul_(av, dt_omega),
                      torch.mul(av, A[t]).addcmul_(du, dt_omega, value=-1))
            az = du @ dt_w_rec_t  # I_t = drive_t + z_{t-1} w_rec
        g_b = dt * ((dU[1:] * U[:-1]).sum((0, 1)) + (dV[1:] * V[:-1]).sum((0, 1)))
        g_omega = dt * ((dV[1:] * U[:-1]).sum((0, 1)) - (dU[1:] * V[:-1]).sum((0, 1)))
        g_w = dt * (Z[:-1].reshape(-1, H).t() @ dU[1:].reshape(-1, H))  # sum_t z_{t-1}^T dI_t
        return dU.mul_(dt), g_w, g_b, g_omega, None, None, None, None, None


def resonator_layer(drive: torch.Tensor, w_rec: torch.Tensor, b_rest: torch.Tensor, omega: torch.Tensor,
                    dt: float = DT, theta: float = THETA, refractory: bool = True,
                    smooth: bool = False, kernel: Kernel = "auto") -> torch.Tensor:
    """A whole BRF (``refractory=True``) or vanilla RF layer over time, with a fused hand-written BPTT.

    Forward is :func:`brf_step` (or :func:`rf_step`) for t = 1..T with I_t = drive_t + z_{t-1} w_rec and
    b_t = b_rest - q_{t-1} (BRF, b_rest = p(omega) - |b_offset|) or b_t = b_rest (RF, b_rest = -|b_offset|).
    Backward runs the adjoint recursion of Eq. 3, 7, 8 in reverse time without an autograd graph; the
    spike's derivative is :func:`double_gaussian`. ``smooth=True`` replaces H by a sigmoid with its exact
    derivative, which makes the layer differentiable so that ``torch.autograd.gradcheck`` can verify the
    recursion (tests only). ``kernel``: ``numba`` runs both passes as compiled loops (:mod:`.kernels`; CPU
    tensors), ``torch`` as torch ops per step (any device), ``auto`` numba on the CPU unless ``smooth``.

    Args:
        drive: (T, B, H) input part of the current, x_t W_in^T.
        w_rec: (H, H) recurrent weights, applied as z_{t-1} @ w_rec.
        b_rest, omega: (H,) damping at rest and angular frequency (non-negative omega).
    Returns:
        (T, B, H) spikes z_t.

    >>> kick = torch.tensor([150.0, 0.0, 0.0]).view(3, 1, 1)   # u_1 = 1.5 > theta: a spike at t = 1
    >>> resonator_layer(kick, torch.zeros(1, 1), torch.tensor([-0.5]), torch.tensor([10.0]))[:, 0, 0]
    tensor([1., 0., 0.])
    >>> resonator_layer(kick, torch.zeros(1, 1), torch.tensor([-0.5]), torch.tensor([10.0]), refractory=False)[:, 0, 0]
    tensor([1., 1., 1.])

    (BRF: q = 1 after the spike raises the threshold to 2 and the damping; vanilla RF keeps firing.)
    """
    return _ResonatorBPTT.apply(drive, w_rec, b_rest, omega, dt, theta, refractory, smooth,
                                _compiled(kernel, drive, smooth))


class RSNNOutput(NamedTuple):
    """Outputs of :class:`RSNN` on a (T, B, n_in) input.

    Attributes:
        readout: (T, B, n_out) leaky-integrator potentials (the logits at every step).
        spikes: (T, B, n_hidden) hidden spikes (0/1).
    """

    readout: torch.Tensor
    spikes: torch.Tensor


class RSNN(nn.Module):
    """Single-layer recurrent spiking network with an LI readout (the paper's BRF-RSNN, RF-RSNN, ALIF-RSNN).

    Parameters (count = (n_in + H) H + 2 H + C H + C, e.g. 1,734 for the ECG net 4-36-6):
        ``hidden.weight`` (H, n_in + H): input and recurrent weights W, bias-free, Xavier-uniform.
        ``omega``, ``b_offset`` (H,) for RF/BRF: U(omega_range), U(b_offset_range); used as |.|.
        ``tau_mem``, ``tau_adp`` (H,) for ALIF: N(mean, std); alpha = exp(-1/|tau_mem|), rho = exp(-1/|tau_adp|).
        ``out.weight`` (C, H): readout weights, bias-free, Xavier-uniform.
        ``tau_out`` (C,): LI time constants ~ N(tau_out); o_t = a o_{t-1} + (1 - a) W_out z_t, a = exp(-1/|tau_out|).

    Args:
        neuron: "brf", "rf" (vanilla, no reset) or "alif".
        generator: torch.Generator for the initialization (reproducible without global RNG state).

    >>> net = RSNN(4, 36, 6, "brf", omega_range=(3.0, 5.0), generator=torch.Generator().manual_seed(0))
    >>> sum(p.numel() for p in net.parameters())
    1734
    >>> net(torch.zeros(5, 2, 4)).readout.shape
    torch.Size([5, 2, 6])
    """

    def __init__(self, n_in: int, n_hidden: int, n_out: int, neuron: Neuron = "brf", *,
                 omega_range: tuple[float, float] = (15.0, 50.0), b_offset_range: tuple[float, float] = (0.1, 1.0),
                 tau_mem: tuple[float, float] = (20.0, 5.0), tau_adp: tuple[float, float] = (200.0, 50.0),
                 tau_out: tuple[float, float] = (20.0, 5.0), dt: float = DT,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        if neuron not in ("brf", "rf", "alif"):
            raise ValueError(f"unknown neuron {neuron!r}; use brf, rf or alif")
        self.n_in, self.n_hidden, self.n_out, self.neuron, self.dt = n_in, n_hidden, n_out, neuron, dt
        g = generator
        self.hidden = nn.Linear(n_in + n_hidden, n_hidden, bias=False)
        nn.init.xavier_uniform_(self.hidden.weight, generator=g)
        if neuron == "alif":
            self.tau_mem = nn.Parameter(torch.empty(n_hidden).normal_(*tau_mem, generator=g))
            self.tau_adp = nn.Parameter(torch.empty(n_hidden).normal_(*tau_adp, generator=g))
        else:
            self.omega = nn.Parameter(torch.empty(n_hidden).uniform_(*omega_range, generator=g))
            self.b_offset = nn.Parameter(torch.empty(n_hidden).uniform_(*b_offset_range, generator=g))
        self.out = nn.Linear(n_hidden, n_out, bias=False)
        nn.init.xavier_uniform_(self.out.weight, generator=g)
        self.tau_out = nn.Parameter(torch.empty(n_out).normal_(*tau_out, generator=g))

    def forward(self, x: torch.Tensor) -> RSNNOutput:
        """Run the network on x: (T, B, n_in) -> :class:`RSNNOutput`."""
        w = self.hidden.weight  # (H, n_in + H)
        drive = x @ w[:, :self.n_in].t()  # (T, B, H): input part of I_t, hoisted out of the loop
        w_rec = w[:, self.n_in:].t()  # (H, H): recurrent part, I_t += z_{t-1} @ w_rec
        if self.neuron == "alif":
            alpha, rho = torch.exp(-1 / self.tau_mem.abs()), torch.exp(-1 / self.tau_adp.abs())  # (H,)
            z = alif_layer(drive, w_rec, alpha, rho)  # (T, B, H)
        else:
            omega = self.omega.abs()  # (H,)
            brf = self.neuron == "brf"
            b_rest = divergence_boundary(omega, self.dt) - self.b_offset.abs() if brf else -self.b_offset.abs()
            z = resonator_layer(drive, w_rec, b_rest, omega, self.dt, refractory=brf)  # (T, B, H)
        return RSNNOutput(li_readout(z @ self.out.weight.t(), self.tau_out), z)


def li_readout(current: torch.Tensor, tau: torch.Tensor, block: int = 128) -> torch.Tensor:
    """Leaky-integrator readout o_t = a o_{t-1} + (1 - a) I_t, a = exp(-1/|tau|), o_0 = 0, in closed form.

    o_t = (1 - a) sum_{s<=t} a^(t-s) I_s. Up to ``block`` steps this is one contraction with the (C, T, T)
    lower-triangular kernel a^(t-s) (built as exp((t-s) log a), so nothing overflows). Longer sequences
    are cut into blocks of ``block`` steps (T^2 work would dominate at T = 1300): within a block the same
    kernel gives the local sums l_t (the readout of the block alone); the carries O_k = o at the end of
    block k follow O_k = a^L O_{k-1} + l_last(k), again a closed-form contraction over blocks with the
    kernel (a^L)^(k-m); then o_t = l_t + a^(i+1) O_{k-1} for step i of block k. The per-step loop is in
    :func:`reference_forward`.

    Args:
        current: (T, B, C) input currents W_out z_t; tau: (C,); block: the block length L.
    Returns (T, B, C).

    >>> li_readout(torch.ones(3, 1, 1), torch.tensor([1 / math.log(2)]))[:, 0, 0]   # a = 0.5
    tensor([0.5000, 0.7500, 0.8750])
    >>> li_readout(torch.ones(3, 1, 1), torch.tensor([1 / math.log(2)]), block=2)[:, 0, 0]
    tensor([0.5000, 0.7500, 0.8750])
    """
    T, B, C = current.shape
    log_a = -1 / tau.abs()  # (C,)
    if T <= block:
        return (1 - torch.exp(log_a)) * torch.einsum("cts,sbc->tbc", _decay_kernel(T, log_a, current), current)
    n = -(-T // block)                                                      # blocks
    padded = torch.cat([current, current.new_zeros(n * block - T, B, C)]) if n * block > T else current
    cur = padded.reshape(n, block, B, C)                                     # (n, L, B, C)
    local = torch.einsum("cts,nsbc->ntbc", _decay_kernel(block, log_a, current), cur)   # (n, L, B, C)
    carry = torch.einsum("ckm,mbc->kbc", _decay_kernel(n, block * log_a, current), local[:, -1])  # (n, B, C)
    steps = torch.arange(1, block + 1, dtype=current.dtype, device=current.device)
    decay = torch.exp(steps[:, None] * log_a[None])                          # (L, C): a^(i+1)
    prev = torch.cat([carry.new_zeros(1, B, C), carry[:-1]])                # (n, B, C): O_{k-1}, O_{-1} = 0
    out = local + decay[None, :, None, :] * prev[:, None]                   # (n, L, B, C)
    return (1 - torch.exp(log_a)) * out.reshape(n * block, B, C)[:T]


def _decay_kernel(T: int, log_a: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """(C, T, T) lower-triangular a^(t-s) = exp((t-s) log a) for t >= s, 0 above the diagonal."""
    lag = torch.arange(T, dtype=like.dtype, device=like.device)
    lag = lag[:, None] - lag[None, :]  # (T, T): t - s
    return torch.exp(lag.clamp(min=0)[None] * log_a[:, None, None]) * (lag >= 0)


def reference_forward(net: RSNN, x: torch.Tensor) -> RSNNOutput:
    """The plain per-step formulation of :meth:`RSNN.forward` (the official code's structure).

    Every step concatenates (x_t, z_{t-1}), applies the full Linear layer, recomputes |omega|, p(omega)
    (or alpha, rho) and updates the LI readout; no work is hoisted. Used to check the fast path and as
    the benchmark baseline. Same shapes as :meth:`RSNN.forward`.
    """
    T, B, _ = x.shape
    zeros = x.new_zeros(B, net.n_hidden)
    s = ALIFState(zeros, zeros, zeros) if net.neuron == "alif" else BRFState(zeros, zeros, zeros, zeros)
    o = x.new_zeros(B, net.n_out)
    outs, spikes = [], []
    for t in range(T):
        current = net.hidden(torch.cat((x[t], s.z), dim=1))  # (B, H)
        if net.neuron == "alif":
            s = alif_step(current, cast(ALIFState, s), torch.exp(-1 / net.tau_mem.abs()), torch.exp(-1 / net.tau_adp.abs()))
        else:
            step = brf_step if net.neuron == "brf" else rf_step
            s = step(current, cast(BRFState, s), net.omega.abs(), net.b_offset.abs(), net.dt)
        a = torch.exp(-1 / net.tau_out.abs())
        o = a * o + (1 - a) * net.out(s.z)
        outs.append(o)
        spikes.append(s.z)
    return RSNNOutput(torch.stack(outs), torch.stack(spikes))


def sequence_nll(readout: torch.Tensor, target: torch.Tensor, label_last: bool = False) -> torch.Tensor:
    """The paper's loss: NLL of log-softmax(readout) summed over the labelled steps, mean over the batch.

    Args:
        readout: (T, B, C) LI potentials.
        target: (B,) one label per sequence, scored at every step (official S-MNIST script) or, with
            ``label_last``, at the last step only; or (T, B), a label per step (ECG).

    >>> round(sequence_nll(torch.zeros(4, 2, 5), torch.tensor([1, 3])).item(), 4) == round(4 * math.log(5), 4)
    True
    """
    logp = torch.log_softmax(readout, dim=-1)
    T, B, C = logp.shape
    if target.dim() == 1:
        if label_last:
            return nn.functional.nll_loss(logp[-1], target)
        target = target.expand(T, B)
    return nn.functional.nll_loss(logp.reshape(T * B, C), target.reshape(T * B), reduction="sum") / B


def predict(readout: torch.Tensor, per_step: bool) -> torch.Tensor:
    """Class predictions: argmax at every step (T, B) for per-step labels, else argmax of the time-mean (B,).

    The time-mean readout is the official S-MNIST scripts' decision rule.

    >>> predict(torch.tensor([[[0.0, 1.0]], [[3.0, 0.0]]]), per_step=False)
    tensor([0])
    """
    return readout.argmax(-1) if per_step else readout.mean(0).argmax(-1)


# The paper's network sizes (input, hidden, classes) and BRF init per task (official scripts).
PAPER_NETWORKS: dict[str, dict] = {
    "smnist": dict(n_in=1, n_hidden=256, n_out=10, omega_range=(15.0, 50.0), b_offset_range=(0.1, 1.0)),
    "psmnist": dict(n_in=1, n_hidden=256, n_out=10, omega_range=(15.0, 85.0), b_offset_range=(0.1, 1.0)),
    "ecg": dict(n_in=4, n_hidden=36, n_out=6, omega_range=(3.0, 5.0), b_offset_range=(0.1, 1.0)),
    "shd": dict(n_in=700, n_hidden=128, n_out=20, omega_range=(5.0, 10.0), b_offset_range=(2.0, 3.0)),
}


def paper_network(task: str, neuron: Neuron = "brf", generator: torch.Generator | None = None) -> RSNN:
    """The BRF-RSNN of the paper for ``task`` in :data:`PAPER_NETWORKS` (e.g. "ecg": 4-36-6, 1,734 parameters).

    >>> from icml24.common.nn import n_params
    >>> n_params(paper_network("shd"))
    108820
    """
    spec = dict(PAPER_NETWORKS[task])
    return RSNN(spec.pop("n_in"), spec.pop("n_hidden"), spec.pop("n_out"), neuron, generator=generator, **spec)
