"""The step rules of the one stochastic pass body (:mod:`dsvm.kernels.stochastic`).

A rule is a small record of its scalar constants. Its *class* selects, at compile time, the
leaves the body calls at each step: the step size, the shrink factor, the averaging weight, the
intercept's step, whether the iterate is projected onto a ball (and so keeps ||u||^2), and the
lazy-prox hooks. Every leaf is an ``overload`` inlined into the body. There are three classes:
:class:`BallRule` for Pegasos and ASSET, whose ``kind`` picks the formulas at run time (one
predictable branch a step), :class:`SgdRule` and :class:`ProxRule` (FOLOS). So the body
compiles three times per layout and dtype, not four (numba types both branches of an ``if``
whatever a compile-time constant says, so a class per rule made no compilation smaller,
only more of them). The plain-Python bodies below are what runs under
``NUMBA_DISABLE_JIT=1``.

Step t of a pass (``t`` the count of earlier steps, from ``hp[T]``) over a mini-batch M of m
rows, g_i = s_i dloss(p_i, y_i) computed for all of M at w_t first, for each output k:

    w_k <- factor * w_k - (eta_t / m) sum_{i in M} g_i x_i,     factor = max(0, 1 - eta_t lambda)
    (projection onto ||w_k|| <= RADIUS when the rule projects)
    b_k <- intercept step of the rule                           (when FIT_INTERCEPT)

with t' = t + 1 and, per rule (eta_t; the averaging weight of the iterate of step t'; the
intercept's step):

* pegasos: 1 / (lambda t'); (t' - AVG_START) ** AVG_POWER; 1 / (lambda t' + 1 / ETA_MAX),
  clipped to [-BIAS_BOUND, BIAS_BOUND];
* sgd: eta0 / (1 + lambda eta0 t) ** power; (t' - AVG_START) ** AVG_POWER;
  INTERCEPT_RATE * eta_t;
* asset: eta0 / t' ** power; eta_t when t' > AVG_START (Lee & Wright); eta_t, clipped;
* prox: eta0 / (1 + lambda eta0 t) ** power; no average (see kernels.prox);
  INTERCEPT_RATE * eta_t.

Pegasos and ASSET project (ball of radius RADIUS, intercept clipped to BIAS_BOUND); the prox
rule (FOLOS) shrinks with lambda_2 = ``hp[L2]`` and soft-thresholds lazily with lambda_1 =
``hp[L1]`` (:mod:`dsvm.kernels.prox`).

ASSET (Lee & Wright, papers/000, Algorithm 1): ASSET has ETA0 = D_X / D_G and POWER = 1/2,
ASSET* ETA0 = 1 / lambda and POWER = 1 (eta_j = 1/(lambda j)). The paper lets the factor
1 - eta_j lambda go negative when eta_j > 1/lambda (a huge first step with a tiny D_G); it is
clipped at 0 here as in the other rules, the minimiser of the quadratic along that direction
instead of overshooting it. On a9a (lambda = 3e-5, eta_1 ~ 50) it never binds.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import types
from numba.extending import overload

from dsvm.kernels import hparams as H
from dsvm.kernels._jit import njit_inline, overload_options
from dsvm.kernels.averages import avg_weight
from dsvm.kernels.prox import catch_up_all, catch_up_row
from dsvm.kernels.weights import power_of

# BallRule.kind: which of the two projecting rules
PEGASOS, ASSET = 0, 1


class BallRule(NamedTuple):
    """Pegasos (Shalev-Shwartz et al. 2007; survey Alg. 2) or ASSET / ASSET* (Lee & Wright,
    papers/000, Algorithm 1), by ``kind``: both project onto a ball and clip the intercept.

    One record class for the two, its kind read at run time (one predictable branch a step, in
    the step size, the averaging weight and the intercept's step), so that the pass body
    compiles once for both per layout and dtype: a class each made numba compile two bodies,
    7-10 s each on a cold cache. (SGD keeps a class of its own: read at run time, the
    projection's bookkeeping cost its dense passes 5-10%.) Fields a kind does not use hold
    whatever ``hp`` holds there."""

    kind: int
    lam: float
    eta0: float  # ASSET
    power: float  # ASSET
    inv_eta_b_max: float  # Pegasos: 1 / INTERCEPT_ETA_MAX
    radius: float
    bias_bound: float


class SgdRule(NamedTuple):
    """(Averaged) SGD (Bottou's svmsgd / svmasgd)."""

    lam: float
    eta0: float
    power: float
    b_rate: float


class ProxRule(NamedTuple):
    """FOLOS: SGD's schedule (``lam`` = ALPHA), L2 shrink ``lam2``, lazy L1 prox ``lam1``."""

    lam: float
    eta0: float
    power: float
    b_rate: float
    lam1: float
    lam2: float


@njit_inline
def _ball_rule(kind, hp):
    return BallRule(kind, hp[H.ALPHA], hp[H.ETA0], hp[H.POWER], 1.0 / hp[H.INTERCEPT_ETA_MAX],
                    hp[H.RADIUS], hp[H.BIAS_BOUND])


@njit_inline
def pegasos_rule(hp):
    return _ball_rule(PEGASOS, hp)


@njit_inline
def sgd_rule(hp):
    return SgdRule(hp[H.ALPHA], hp[H.ETA0], hp[H.POWER], hp[H.INTERCEPT_RATE])


@njit_inline
def asset_rule(hp):
    return _ball_rule(ASSET, hp)


@njit_inline
def prox_rule(hp):
    return ProxRule(hp[H.ALPHA], hp[H.ETA0], hp[H.POWER], hp[H.INTERCEPT_RATE], hp[H.L1],
                    hp[H.L2])


def _rule_class(rule):
    """The rule's record class, from a numba type or from a value (without the JIT)."""
    if isinstance(rule, types.BaseNamedTuple):
        return rule.instance_class
    return type(rule)


# -- the leaves: one plain-Python body (NUMBA_DISABLE_JIT) and one overload each ------------------
def step_size(rule, t):
    """(eta_t, t + 1) for the step that follows ``t`` earlier ones."""
    return _STEP[type(rule)](rule, t)


@njit_inline
def _ball_step(rule, t):
    t += 1.0
    if rule.kind == PEGASOS:
        return 1.0 / (rule.lam * t), t
    return rule.eta0 / math.pow(t, rule.power), t


@njit_inline
def _sgd_step(rule, t):
    # powers 1, 0.75, 0.5 without math.pow (kernels.weights.power_of)
    return rule.eta0 / power_of(1.0 + rule.lam * rule.eta0 * t, rule.power), t + 1.0


@njit_inline
def _prox_step(rule, t):
    return rule.eta0 / math.pow(1.0 + rule.lam * rule.eta0 * t, rule.power), t + 1.0


_STEP = {BallRule: _ball_step, SgdRule: _sgd_step, ProxRule: _prox_step}


@overload(step_size, **overload_options())
def _ol_step_size(rule, t):
    leaf = _STEP[_rule_class(rule)]
    return lambda rule, t: leaf(rule, t)


def shrink_factor(rule, eta):
    """The L2 shrink of a step, 1 - eta lambda, clipped at 0 (lambda_2 for the prox rule)."""
    lam = rule.lam2 if isinstance(rule, ProxRule) else rule.lam
    return max(0.0, 1.0 - eta * lam)


@overload(shrink_factor, **overload_options())
def _ol_shrink_factor(rule, eta):
    if _rule_class(rule) is ProxRule:
        return lambda rule, eta: max(0.0, 1.0 - eta * rule.lam2)
    return lambda rule, eta: max(0.0, 1.0 - eta * rule.lam)


def averages(rule):
    """Whether the rule keeps a running average when ``hp[AVERAGE]`` asks (not the prox rule:
    an average of sparse iterates is not sparse). A compile-time constant."""
    return not isinstance(rule, ProxRule)


@overload(averages, **overload_options())
def _ol_averages(rule):
    if _rule_class(rule) is ProxRule:
        return lambda rule: False
    return lambda rule: True


@njit_inline
def _ball_averaging_weight(rule, t, eta, avg_start, avg_power):
    if rule.kind == ASSET:  # step 9 of Algorithm 1: the iterates weigh their step sizes
        return eta if t > avg_start else 0.0
    return avg_weight(t, avg_start, avg_power)


def averaging_weight(rule, t, eta, avg_start, avg_power):
    """The weight of the iterate after step ``t`` in the running average."""
    if isinstance(rule, BallRule):
        return _ball_averaging_weight(rule, t, eta, avg_start, avg_power)
    return avg_weight(t, avg_start, avg_power)


@overload(averaging_weight, **overload_options())
def _ol_averaging_weight(rule, t, eta, avg_start, avg_power):
    if _rule_class(rule) is BallRule:
        return lambda rule, t, eta, avg_start, avg_power: _ball_averaging_weight(
            rule, t, eta, avg_start, avg_power)
    return lambda rule, t, eta, avg_start, avg_power: avg_weight(t, avg_start, avg_power)


def projects(rule):
    """Whether the rule projects w onto a ball, and so keeps ||u||^2 current through every
    update (and tracks the young support of CSR rows, see kernels.support). Compile-time."""
    return isinstance(rule, BallRule)


@overload(projects, **overload_options())
def _ol_projects(rule):
    if _rule_class(rule) is BallRule:
        return lambda rule: True
    return lambda rule: False


def project(rule, s, q):
    """(the scale s after the projection of w = s u onto ||w|| <= radius, whether it moved),
    with q = ||u||^2: ||w||^2 = s^2 q, one multiply of s."""
    return _ball(rule, s, q) if projects(rule) else (s, False)


@njit_inline
def _ball(rule, s, q):
    norm2 = s * s * q
    if norm2 > rule.radius * rule.radius:
        return s * (rule.radius / math.sqrt(norm2)), True
    return s, False


@overload(project, **overload_options())
def _ol_project(rule, s, q):
    if _rule_class(rule) is BallRule:
        return lambda rule, s, q: _ball(rule, s, q)
    return lambda rule, s, q: (s, False)


def intercept_step(rule, b, eta, t, g_sum, m):
    """The intercept after the step on a batch of m rows whose gradients sum to ``g_sum``."""
    return _INTERCEPT[type(rule)](rule, b, eta, t, g_sum, m)


@njit_inline
def _ball_intercept(rule, b, eta, t, g_sum, m):
    if rule.kind == PEGASOS:
        # 1 / (lambda t + 1 / eta_b_max): eta_t capped near INTERCEPT_ETA_MAX while
        # 1/(lambda t) is larger (eta_t itself when the cap is inf)
        eta = 1.0 / (rule.lam * t + rule.inv_eta_b_max)
    bk = b - eta * g_sum / m
    return min(rule.bias_bound, max(-rule.bias_bound, bk))


@njit_inline
def _rate_intercept(rule, b, eta, t, g_sum, m):
    return b - rule.b_rate * eta * g_sum / m


_INTERCEPT = {BallRule: _ball_intercept, SgdRule: _rate_intercept, ProxRule: _rate_intercept}


@overload(intercept_step, **overload_options())
def _ol_intercept_step(rule, b, eta, t, g_sum, m):
    leaf = _INTERCEPT[_rule_class(rule)]
    return lambda rule, b, eta, t, g_sum, m: leaf(rule, b, eta, t, g_sum, m)


# -- the lazy prox (kernels.prox): its state and hooks; nothing for the other rules ---------------
def lazy_prox(rule):
    """Whether the rule soft-thresholds lazily (the prox rule). A compile-time constant: the
    body calls the hooks below only under it, so that the other rules do not even pass arrays
    to them (an inlined call that takes arrays counts their references, ~25 ns a step)."""
    return isinstance(rule, ProxRule)


@overload(lazy_prox, **overload_options())
def _ol_lazy_prox(rule):
    if _rule_class(rule) is ProxRule:
        return lambda rule: True
    return lambda rule: False


def prox_state(rule, W, A):
    """(q (K,), last (K, d)) float64 for the prox rule (see kernels.prox), ``last`` in the
    model's A slot (the rule keeps no average; zeroed here); two placeholder scalars
    otherwise."""
    if isinstance(rule, ProxRule):
        A[:, :] = 0.0
        return np.zeros(W.shape[0]), A
    return 0.0, 0.0


@overload(prox_state, **overload_options())
def _ol_prox_state(rule, W, A):
    if _rule_class(rule) is ProxRule:

        def impl(rule, W, A):
            A[:, :] = 0.0
            return np.zeros(W.shape[0]), A

        return impl
    return lambda rule, W, A: (0.0, 0.0)


def prox_catch_up(rule, X, i, W, k, q, last):
    """Before row i's margin: its coordinates of u_k get their pending thresholds."""
    if isinstance(rule, ProxRule):
        catch_up_row(X, i, W, k, q[k], last)


@overload(prox_catch_up, **overload_options())
def _ol_prox_catch_up(rule, X, i, W, k, q, last):
    if _rule_class(rule) is ProxRule:
        return lambda rule, X, i, W, k, q, last: catch_up_row(X, i, W, k, q[k], last)
    return lambda rule, X, i, W, k, q, last: None


def prox_settle(rule, W, k, q, last):
    """Every pending threshold of output k applied, q_k restarted: before the scale is folded
    into u (the thresholds are in u's units) and at the end of a pass."""
    if isinstance(rule, ProxRule):
        catch_up_all(W, k, q[k], last)
        q[k] = 0.0


@overload(prox_settle, **overload_options())
def _ol_prox_settle(rule, W, k, q, last):
    if _rule_class(rule) is ProxRule:

        def impl(rule, W, k, q, last):
            catch_up_all(W, k, q[k], last)
            q[k] = 0.0

        return impl
    return lambda rule, W, k, q, last: None


def prox_threshold(rule, k, q, eta, s):
    """This step's backward (prox) step, on every coordinate: eta lambda_1 on w, / s on u."""
    if isinstance(rule, ProxRule):
        q[k] += eta * rule.lam1 / s


@overload(prox_threshold, **overload_options())
def _ol_prox_threshold(rule, k, q, eta, s):
    if _rule_class(rule) is ProxRule:

        def impl(rule, k, q, eta, s):
            q[k] += eta * rule.lam1 / s

        return impl
    return lambda rule, k, q, eta, s: None
