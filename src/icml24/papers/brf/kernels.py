"""Compiled CPU kernels of the fused BRF / RF and ALIF layers (numba): the same recursions as the torch loops
of :mod:`.model` (``_ResonatorBPTT``, ``_ALIFBPTT``), one compiled loop over time per pass instead of a dozen
small torch kernels per step.

At the paper's sizes on a CPU the torch loops are bound by per-kernel overhead (the ECG net is 16 x 36 per
step; 1,300 steps); here each step costs one pass over (B, H) plus the products. The spikes are 0 or 1, so the
BRF layer's recurrent product z_{t-1} W is the sum of the rows of W of the neurons that spiked (event-driven,
as spiking hardware computes it; cost proportional to the spike rate, 0.03-0.14 in trained BRF networks), and
so is its weight gradient sum_t z_{t-1}^T dI_t; the BRF adjoint product dI_t W^T and ALIF's products are
dense (BLAS). The sums run in ascending neuron order, where BLAS blocks them: equal in float64 to round-off;
in float32 a last-bit difference can flip a spike at the threshold, after which two runs part. The arrays
are numpy views of the layer's CPU tensors (float32 or float64, C-contiguous); the caller allocates every output (as
numpy arrays, which get transparent huge pages: :func:`.model._buffers`). Equations
as in :mod:`.model`: Eq. 3 (Euler step of the RF oscillator), Eq. 4 / 7 (spike with refractory threshold),
Eq. 8 (smooth reset b_t = b_rest - q_{t-1}). The forward kernels store the spike's argument x_t; the caller
turns it into the surrogate slope h(x_t) with vectorised torch calls, a few steps at a time (scalar exp here
would be most of the forward's time).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def resonator_forward(drive, w_rec, a_rest, dt_omega, dt, theta, refractory, decay, U, V, Z, X, A):
    """Forward of the BRF (``refractory``) / RF layer: fills U, V (membrane), Z (spikes), X (the spike's
    argument x_t) and A (damping factor a_t = 1 + dt b_t), all (T, B, H), from drive (T, B, H),
    w_rec (H, H), a_rest = 1 + dt b_rest and dt_omega = dt omega (H,). The loop over neurons appends
    nothing (the spike is a select, and its only tests are of the loop-invariant ``refractory``), so LLVM can
    vectorise it (0.58-0.75 s -> 0.41-0.47 s at the paper's size); the neurons that fired are gathered from
    the row of Z afterwards."""
    T, B, H = drive.shape
    u = np.zeros((B, H), drive.dtype)
    v = np.zeros((B, H), drive.dtype)
    q = np.zeros((B, H), drive.dtype)
    rec = np.empty(H, drive.dtype)
    fired = np.empty((B, H), np.int64)                              # per row b: the neurons with z_{t-1} = 1
    n_fired = np.zeros(B, np.int64)
    one, zero = drive.dtype.type(1), drive.dtype.type(0)
    for t in range(T):
        for b in range(B):
            _spike_rows(w_rec, fired[b], n_fired[b], rec)            # (z_{t-1} W)[b] (H,), event-driven
            ub, vb, qb, zt = u[b], v[b], q[b], Z[t, b]               # (H,) rows
            for h in range(H):
                current = drive[t, b, h] + rec[h]                   # I_t
                a = a_rest[h] - dt * qb[h] if refractory else a_rest[h]   # 1 + dt (b_rest - q_{t-1}), Eq. 8
                u_new = current * dt + a * ub[h] - dt_omega[h] * vb[h]    # Eq. 3
                v_new = a * vb[h] + dt_omega[h] * ub[h]
                x = u_new - qb[h] - theta if refractory else u_new - theta   # Eq. 7 / Eq. 4
                spike = one if x > 0 else zero
                if refractory:
                    qb[h] = decay * qb[h] + spike                   # q_t = 0.9 q_{t-1} + z_t
                ub[h], vb[h] = u_new, v_new
                U[t, b, h] = u_new
                V[t, b, h] = v_new
                zt[h] = spike
                X[t, b, h] = x
                A[t, b, h] = a
            n = 0
            for h in range(H):
                if zt[h] != 0:
                    fired[b, n] = h
                    n += 1
            n_fired[b] = n


@numba.njit(cache=True, inline="always")
def _spike_rows(w, rows, n, out):
    """out = sum of the first ``n`` rows ``rows`` of w (H, H): z W for a 0/1 row z whose ones are at ``rows``."""
    out[:] = 0.0
    for i in range(n):
        j = rows[i]
        for k in range(w.shape[1]):
            out[k] += w[j, k]


@numba.njit(cache=True)
def resonator_backward(grad_z, dt_w_rec_t, dt_omega, dt, refractory, decay, U, V, Z, S, A, dU, g_b, g_omega, g_w):
    """Adjoint recursion of :func:`resonator_forward` in reverse time: fills dU (T, B, H) with dt dL/du_t (the
    gradient of the drive, which enters u_t as dt I_t; each row is scaled once the recursion has used it) from
    grad_z = dL/dz_t (T, B, H) and dt_w_rec_t = dt w_rec^T (H, H), and accumulates into g_b, g_omega (H,)
    sum_{t >= 1, b} (du_t u_{t-1} + dv_t v_{t-1}) and (dv_t u_{t-1} - du_t v_{t-1}) (times dt: dL/db_rest,
    dL/domega) and into g_w (H, H) sum_{t >= 1} z_{t-1}^T du_t (times dt: dL/dw_rec, from the spikes Z), so that
    no (T, B, H) product is formed outside."""
    T, B, H = grad_z.shape
    dt_cast = grad_z.dtype.type(dt)                                 # dt in the buffers' dtype, as torch's mul_(dt)
    au = np.zeros((B, H), grad_z.dtype)                             # dL/du_t, dL/dv_t, dL/dq_t from the future
    av = np.zeros((B, H), grad_z.dtype)
    aq = np.zeros((B, H), grad_z.dtype)
    az = np.zeros((B, H), grad_z.dtype)                             # dL/dz_t via I_{t+1}
    for t in range(T - 1, -1, -1):
        for b in range(B):
            for h in range(H):
                dz = grad_z[t, b, h] + az[b, h] + aq[b, h] if refractory else grad_z[t, b, h] + az[b, h]
                dx = dz * S[t, b, h]
                du = au[b, h] + dx
                dv = av[b, h]
                dU[t, b, h] = du
                if t > 0:
                    u_prev, v_prev = U[t - 1, b, h], V[t - 1, b, h]
                    db = du * u_prev + dv * v_prev                  # dL/db_t / dt, b_t = b_rest - q_{t-1}
                    g_b[h] += db
                    g_omega[h] += dv * u_prev - du * v_prev
                    if refractory:                                  # x_t = u_t - q_{t-1} - theta
                        aq[b, h] = aq[b, h] * decay - dx - dt * db
                a = A[t, b, h]
                au[b, h] = du * a + dv * dt_omega[h]
                av[b, h] = dv * a - du * dt_omega[h]
            if t > 0:                                               # g_w[j] += du_t[b] where z_{t-1}[b, j] = 1
                for j in range(H):
                    if Z[t - 1, b, j] != 0:
                        for k in range(H):
                            g_w[j, k] += dU[t, b, k]
        np.dot(dU[t], dt_w_rec_t, az)                               # I_t = drive_t + z_{t-1} w_rec
        dU[t] *= dt_cast                                            # dL/ddrive_t = dt dL/du_t


@numba.njit(cache=True)
def alif_forward(drive, w_rec, alpha, rho, theta0, beta, I, UR, AD, TH, Z, X):
    """Forward of the ALIF layer: fills I (current), UR (reset membrane u'_t), AD (adaptation a_t), TH
    (threshold), Z (spikes) and X (the spike's argument), all (T, B, H), from drive (T, B, H), w_rec (H, H)
    and the decays alpha, rho (H,)."""
    T, B, H = drive.shape
    u = np.zeros((B, H), drive.dtype)
    ad = np.zeros((B, H), drive.dtype)
    z = np.zeros((B, H), drive.dtype)
    rec = np.empty((B, H), drive.dtype)
    for t in range(T):
        np.dot(z, w_rec, rec)
        for b in range(B):
            for h in range(H):
                current = drive[t, b, h] + rec[b, h]                 # I_t = drive_t + z_{t-1} W
                ad[b, h] = rho[h] * ad[b, h] + (1 - rho[h]) * z[b, h]    # a_t = rho a + (1 - rho) z
                th = ad[b, h] * beta + theta0                        # theta_t = 0.01 + 1.8 a_t
                um = alpha[h] * u[b, h] + (1 - alpha[h]) * current  # u_t = alpha u' + (1 - alpha) I
                x = um - th
                spike = 1.0 if x > 0 else 0.0
                z[b, h] = spike
                u[b, h] = um - spike * th                            # soft reset u'_t
                I[t, b, h] = current
                UR[t, b, h] = u[b, h]
                AD[t, b, h] = ad[b, h]
                TH[t, b, h] = th
                Z[t, b, h] = spike
                X[t, b, h] = x


@numba.njit(cache=True)
def alif_backward(grad_z, w_rec_t, alpha, rho, beta, I, UR, AD, TH, Z, S, gI, g_alpha, g_rho):
    """Adjoint recursion of :func:`alif_forward`: fills gI = dL/dI_t (T, B, H) and accumulates g_alpha,
    g_rho (H,) from grad_z (T, B, H) and w_rec_t = w_rec^T (H, H)."""
    T, B, H = grad_z.shape
    gu_next = np.zeros((B, H), grad_z.dtype)                        # dL/du_{t+1}, dL/da_{t+1} from the future
    ga_next = np.zeros((B, H), grad_z.dtype)
    rec = np.zeros((B, H), grad_z.dtype)                            # dL/dz_t via I_{t+1}
    for t in range(T - 1, -1, -1):
        for b in range(B):
            for h in range(H):
                gur = alpha[h] * gu_next[b, h]                       # dL/du'_t
                gz = grad_z[t, b, h] + (1 - rho[h]) * ga_next[b, h] - gur * TH[t, b, h] + rec[b, h]
                gx = gz * S[t, b, h]
                gu = gur + gx                                        # x_t = u_t - theta_t
                gth = -gx - gur * Z[t, b, h]                         # u'_t = u_t - z_t theta_t
                ga = rho[h] * ga_next[b, h] + beta * gth
                gI[t, b, h] = gu * (1 - alpha[h])
                u_prev = UR[t - 1, b, h] if t > 0 else 0.0
                a_prev = AD[t - 1, b, h] if t > 0 else 0.0
                z_prev = Z[t - 1, b, h] if t > 0 else 0.0
                g_alpha[h] += gu * (u_prev - I[t, b, h])             # du_t / dalpha
                g_rho[h] += ga * (a_prev - z_prev)                   # da_t / drho
                gu_next[b, h] = gu
                ga_next[b, h] = ga
        np.dot(np.ascontiguousarray(gI[t]), w_rec_t, rec)
