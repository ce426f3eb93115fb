"""Deterministic procedural top-down 2-D grid world.

The world is a grid of ``cell x cell`` pixel cells containing:

* one **agent** (controlled by discrete actions, see :data:`ACTIONS`), drawn as
  a solid saturated-red square with a 1-px darker border.  The red fill colour
  (:func:`agent_color`) is used nowhere else, so a locator can find the agent
  by exact colour match; no other pixel in a frame is red-dominant either;
* static **walls** that block the agent and bounce passive objects;
* passive **objects** (discs of distinct colours) that move by a fixed
  velocity every step and bounce off borders and walls;
* a textured, seed-dependent **background** (two octaves of integer value
  noise plus faint tile seams) so frames are not flat and SSIM/PSNR are
  meaningful.

Everything is deterministic: layouts and textures come from
``numpy.random.default_rng`` seeded explicitly (no global random state) and all
pixel arithmetic is integer, so the same seed, spec and actions give
byte-identical videos on any machine.

Action semantics: ``up`` decreases the row, ``down`` increases it, ``left``
decreases the column, ``right`` increases it, ``noop`` does nothing.  A move
into a wall or off the grid leaves the agent where it is.  Objects and the
agent do not interact (they may overlap; the agent is drawn on top), and
objects may overlap each other.
"""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, fields
from typing import Any, Callable, Mapping, Sequence

import numpy as np

__all__ = [
    "ACTIONS",
    "AGENT_BORDER_COLOR",
    "AGENT_COLOR",
    "OBJECT_COLORS",
    "WALL_COLOR",
    "WorldSpec",
    "WorldState",
    "agent_color",
    "initial_state",
    "render",
    "rollout",
    "sample_actions",
    "step",
]

ACTIONS: tuple[str, ...] = ("noop", "up", "down", "left", "right")
"""Action names; the index of a name is its action id."""

# (drow, dcol) per action id, in grid cells.
_DELTAS: tuple[tuple[int, int], ...] = ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1))

AGENT_COLOR: tuple[int, int, int] = (225, 20, 20)
"""Fill colour of the agent; appears nowhere else in a rendered frame."""
AGENT_BORDER_COLOR: tuple[int, int, int] = (115, 6, 6)
"""Colour of the agent's 1-px border; also unique to the agent."""
WALL_COLOR: tuple[int, int, int] = (58, 64, 92)
"""Base colour of wall cells (a dark slate blue, textured as bricks)."""
OBJECT_COLORS: tuple[tuple[int, int, int], ...] = (
    (240, 205, 40),   # yellow
    (40, 200, 220),   # cyan
    (60, 95, 235),    # blue
    (240, 240, 240),  # white
    (165, 75, 215),   # purple
    (120, 220, 60),   # lime
)
"""Colours of passive objects, in order; none is red-dominant."""

# Background: an earthy grey-green whose green channel always exceeds red, so
# no background pixel can be mistaken for the agent.
_BG_BASE = (112, 132, 100)
_BG_COARSE = (16, 22)  # (lattice period in pixels, amplitude) of coarse noise
_BG_FINE = (4, 8)      # fine noise octave
_BG_TINT = (32, 8)     # slow red/blue tint variation
_TILE_SEAM = 8         # darkening of pixels on cell boundaries
_TEXTURE_STREAM = 0x7E87  # mixes with the seed to get an independent RNG stream


# --------------------------------------------------------------------------
# Spec and state
# --------------------------------------------------------------------------


def _check_int(name: str, value: Any, minimum: int | None = None) -> int:
    """Return ``value`` as an ``int`` or raise a ValueError naming ``name``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


@dataclass(frozen=True)
class WorldSpec:
    """Static world parameters (sizes in pixels, counts for procedural layout).

    ``n_walls`` and ``n_objects`` only control :func:`initial_state`; a
    hand-built :class:`WorldState` may hold any number of walls and objects.
    """

    height: int = 64
    width: int = 64
    cell: int = 8
    n_walls: int = 6
    n_objects: int = 1

    def __post_init__(self) -> None:
        cell = _check_int("cell", self.cell, 3)  # border + interior + border
        for name in ("height", "width"):
            size = _check_int(name, getattr(self, name), cell)
            if size % cell:
                raise ValueError(f"{name}={size} must be a multiple of cell={cell}")
        n_walls = _check_int("n_walls", self.n_walls, 0)
        n_objects = _check_int("n_objects", self.n_objects, 0)
        if n_objects > len(OBJECT_COLORS):
            raise ValueError(
                f"n_objects={n_objects} exceeds the {len(OBJECT_COLORS)} distinct object colours"
            )
        n_cells = self.rows * self.cols
        if 1 + n_walls + n_objects > n_cells:
            raise ValueError(
                f"grid has {n_cells} cells, too few for the agent, {n_walls} walls "
                f"and {n_objects} objects"
            )

    @property
    def rows(self) -> int:
        """Number of grid rows."""
        return self.height // self.cell

    @property
    def cols(self) -> int:
        """Number of grid columns."""
        return self.width // self.cell

    def to_dict(self) -> dict:
        """Plain-JSON representation."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "WorldSpec":
        """Inverse of :meth:`to_dict`; rejects unknown keys."""
        if not isinstance(data, Mapping):
            raise ValueError(f"spec must be a mapping, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown WorldSpec fields {unknown}; expected a subset of {sorted(known)}")
        return cls(**dict(data))


def _as_int_tuple(name: str, value: Any, length: int) -> tuple[int, ...]:
    """Convert a sequence of ``length`` integers to a tuple of Python ints."""
    try:
        items = tuple(value)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of {length} integers, got {value!r}") from None
    if len(items) != length:
        raise ValueError(f"{name} must have {length} integers, got {value!r}")
    return tuple(_check_int(name, v) for v in items)


@dataclass(frozen=True)
class WorldState:
    """Complete simulation state; enough to re-simulate and re-render.

    Coordinates are in grid cells: ``agent`` and each wall are ``(row, col)``;
    each object is ``(row, col, drow, dcol)`` with velocity components in
    ``{-1, 0, 1}``.  Sequences are normalised to tuples of ints on
    construction, and the state is validated against ``spec``.
    """

    seed: int
    spec: WorldSpec
    agent: tuple[int, int]
    walls: tuple[tuple[int, int], ...]
    objects: tuple[tuple[int, int, int, int], ...]

    def __post_init__(self) -> None:
        seed = _check_int("seed", self.seed, 0)
        if not isinstance(self.spec, WorldSpec):
            raise ValueError(f"spec must be a WorldSpec, got {type(self.spec).__name__}")
        agent = _as_int_tuple("agent", self.agent, 2)
        for name in ("walls", "objects"):
            value = getattr(self, name)
            if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
                raise ValueError(f"{name} must be a sequence, got {value!r}")
        walls = tuple(_as_int_tuple(f"walls[{i}]", w, 2) for i, w in enumerate(self.walls))
        objects = tuple(_as_int_tuple(f"objects[{i}]", o, 4) for i, o in enumerate(self.objects))
        object.__setattr__(self, "seed", seed)
        object.__setattr__(self, "agent", agent)
        object.__setattr__(self, "walls", walls)
        object.__setattr__(self, "objects", objects)

        rows, cols = self.spec.rows, self.spec.cols

        def check_cell(name: str, r: int, c: int) -> None:
            if not (0 <= r < rows and 0 <= c < cols):
                raise ValueError(f"{name}=({r}, {c}) is outside the {rows}x{cols} grid")

        check_cell("agent", *agent)
        for i, (r, c) in enumerate(walls):
            check_cell(f"walls[{i}]", r, c)
        if len(set(walls)) != len(walls):
            raise ValueError("walls contain duplicate cells")
        wall_set = set(walls)
        if agent in wall_set:
            raise ValueError(f"agent {agent} is on a wall")
        if len(objects) > len(OBJECT_COLORS):
            raise ValueError(f"at most {len(OBJECT_COLORS)} objects are supported, got {len(objects)}")
        for i, (r, c, dr, dc) in enumerate(objects):
            check_cell(f"objects[{i}]", r, c)
            if (r, c) in wall_set:
                raise ValueError(f"objects[{i}] at ({r}, {c}) is on a wall")
            if dr not in (-1, 0, 1) or dc not in (-1, 0, 1):
                raise ValueError(f"objects[{i}] velocity ({dr}, {dc}) must have components in {{-1, 0, 1}}")

    def to_dict(self) -> dict:
        """Plain-JSON representation (dicts, lists and ints only)."""
        return {
            "seed": self.seed,
            "spec": self.spec.to_dict(),
            "agent": list(self.agent),
            "walls": [list(w) for w in self.walls],
            "objects": [list(o) for o in self.objects],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "WorldState":
        """Inverse of :meth:`to_dict`."""
        if not isinstance(data, Mapping):
            raise ValueError(f"state must be a mapping, got {type(data).__name__}")
        required = ("seed", "spec", "agent", "walls", "objects")
        missing = [k for k in required if k not in data]
        if missing:
            raise ValueError(f"state dict is missing keys {missing}")
        return cls(
            seed=data["seed"],
            spec=WorldSpec.from_dict(data["spec"]),
            agent=data["agent"],
            walls=data["walls"],
            objects=data["objects"],
        )


# --------------------------------------------------------------------------
# Layout, actions and dynamics
# --------------------------------------------------------------------------


def initial_state(seed: int, spec: WorldSpec = WorldSpec()) -> WorldState:
    """Deterministic layout from the seed (``numpy.random.default_rng(seed)``).

    Agent, walls and objects occupy distinct cells.  Object velocities are one
    of the eight non-zero directions (diagonals included).
    """
    seed = _check_int("seed", seed, 0)
    if not isinstance(spec, WorldSpec):
        raise ValueError(f"spec must be a WorldSpec, got {type(spec).__name__}")
    rng = np.random.default_rng(seed)
    cols = spec.cols
    cells = rng.permutation(spec.rows * cols)[: 1 + spec.n_walls + spec.n_objects]
    coords = [(int(i) // cols, int(i) % cols) for i in cells]
    agent, walls, obj_cells = coords[0], coords[1 : 1 + spec.n_walls], coords[1 + spec.n_walls :]
    directions = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)]
    picks = rng.integers(0, len(directions), size=len(obj_cells))
    objects = tuple((r, c) + directions[int(k)] for (r, c), k in zip(obj_cells, picks))
    return WorldState(seed=seed, spec=spec, agent=agent, walls=tuple(walls), objects=objects)


def sample_actions(seed: int, n: int, *, p_repeat: float = 0.5) -> tuple[int, ...]:
    """Deterministic random action ids.

    The first action is uniform over :data:`ACTIONS`; each later one repeats
    its predecessor with probability ``p_repeat`` and is otherwise drawn
    uniformly again (so runs of the same action look purposeful).  The result
    for ``n`` is a prefix of the result for any larger ``n``.
    """
    seed = _check_int("seed", seed, 0)
    n = _check_int("n", n, 0)
    if not 0.0 <= float(p_repeat) <= 1.0:
        raise ValueError(f"p_repeat must be in [0, 1], got {p_repeat}")
    # One (fresh, repeat) pair of uniforms per step, drawn row by row, so the
    # first k actions do not depend on n (shorter sequences are prefixes).
    u = np.random.default_rng(seed).random((n, 2))
    fresh = np.minimum((u[:, 0] * len(ACTIONS)).astype(np.int64), len(ACTIONS) - 1)
    repeat = u[:, 1] < float(p_repeat)
    out: list[int] = []
    for i in range(n):
        out.append(out[-1] if i > 0 and repeat[i] else int(fresh[i]))
    return tuple(out)


def _check_action(action: Any, where: str) -> int:
    """Validate one action id; ``where`` names it in the error message."""
    valid = f"expected an integer in [0, {len(ACTIONS) - 1}] ({', '.join(ACTIONS)})"
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise ValueError(f"{where}={action!r} is not a valid action id; {valid}")
    if not 0 <= action < len(ACTIONS):
        raise ValueError(f"{where}={int(action)} is not a valid action id; {valid}")
    return int(action)


def _blocker(state: WorldState) -> Callable[[int, int], bool]:
    """Return ``blocked(row, col)``: True for walls and cells off the grid."""
    rows, cols = state.spec.rows, state.spec.cols
    walls = frozenset(state.walls)

    def blocked(r: int, c: int) -> bool:
        return not (0 <= r < rows and 0 <= c < cols) or (r, c) in walls

    return blocked


def _move_object(obj: tuple[int, int, int, int], blocked: Callable[[int, int], bool]):
    """Advance one passive object by one step, bouncing as needed.

    Each velocity component whose axis-aligned neighbour is blocked is
    reversed.  If the resulting target cell is still blocked (a diagonal
    corner hit, or a cell enclosed on both sides), both components are
    reversed and the object stays where it is for this step.
    """
    r, c, dr, dc = obj
    if dr and blocked(r + dr, c):
        dr = -dr
    if dc and blocked(r, c + dc):
        dc = -dc
    if blocked(r + dr, c + dc):
        return (r, c, -dr, -dc)
    return (r + dr, c + dc, dr, dc)


def step(state: WorldState, action: int) -> WorldState:
    """Advance the world by one step.

    The agent moves one cell in the action direction unless the target is a
    wall or off the grid (then it stays).  Passive objects move by
    ``(drow, dcol)`` and bounce off borders and walls (see
    :func:`_move_object`).  Objects and the agent never block each other.
    """
    action = _check_action(action, "action")
    blocked = _blocker(state)
    dr, dc = _DELTAS[action]
    r, c = state.agent
    agent = state.agent if blocked(r + dr, c + dc) else (r + dr, c + dc)
    objects = tuple(_move_object(o, blocked) for o in state.objects)
    # valid by construction (the agent and each object only enter free cells of the grid, the
    # velocities stay in {-1, 0, 1}): built without re-validating it, which cost most of a rollout
    nxt = object.__new__(WorldState)
    for name, value in (("seed", state.seed), ("spec", state.spec), ("agent", agent), ("walls", state.walls),
                        ("objects", objects)):
        object.__setattr__(nxt, name, value)
    return nxt


# --------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------


def agent_color() -> tuple[int, int, int]:
    """RGB fill colour of the agent (unique within every rendered frame)."""
    return AGENT_COLOR


def _value_noise(rng: np.random.Generator, h: int, w: int, period: int, amp: int) -> np.ndarray:
    """Integer bilinear value noise in ``[-amp, amp]`` with the given lattice period."""
    lattice = rng.integers(-amp, amp + 1, size=(h // period + 2, w // period + 2), dtype=np.int64)
    ys, xs = np.arange(h), np.arange(w)
    iy, fy = (ys // period)[:, None], (ys % period)[:, None]
    ix, fx = (xs // period)[None, :], (xs % period)[None, :]
    p = period
    num = (
        lattice[iy, ix] * (p - fy) * (p - fx)
        + lattice[iy, ix + 1] * (p - fy) * fx
        + lattice[iy + 1, ix] * fy * (p - fx)
        + lattice[iy + 1, ix + 1] * fy * fx
    )
    return (num + (p * p) // 2) // (p * p)


@functools.lru_cache(maxsize=64)
def _static_layer(seed: int, spec: WorldSpec, walls: tuple[tuple[int, int], ...]) -> np.ndarray:
    """Background plus walls, cached per layout (read-only int array)."""
    h, w, cell = spec.height, spec.width, spec.cell
    rng = np.random.default_rng((seed, _TEXTURE_STREAM))
    lum = _value_noise(rng, h, w, *_BG_COARSE) + _value_noise(rng, h, w, *_BG_FINE)
    tint = _value_noise(rng, h, w, *_BG_TINT)
    ys, xs = np.arange(h)[:, None], np.arange(w)[None, :]
    seam = ((ys % cell == 0) | (xs % cell == 0)) * _TILE_SEAM
    base = np.array(_BG_BASE, dtype=np.int64)
    img = base + (lum - seam)[..., None] + tint[..., None] * np.array([1, 0, -1])

    if walls:
        # Bricks: half-cell-high courses, cell-wide bricks offset every other
        # course, in global pixel coordinates so neighbouring walls join up.
        course = max(cell // 2, 2)
        offset = ((ys // course) % 2) * (cell // 2)
        mortar = (ys % course == course - 1) | ((xs + offset) % cell == cell - 1)
        wall_img = np.array(WALL_COLOR, dtype=np.int64) + (lum // 2 - mortar * 18)[..., None]
        mask = np.zeros((h, w), dtype=bool)
        for r, c in walls:
            mask[r * cell : (r + 1) * cell, c * cell : (c + 1) * cell] = True
        img = np.where(mask[..., None], wall_img, img)

    layer = np.clip(img, 0, 255).astype(np.uint8)
    layer.flags.writeable = False
    return layer


@functools.lru_cache(maxsize=16)
def _disc_mask(cell: int) -> np.ndarray:
    """Boolean disc inscribed in a ``cell x cell`` square (integer test)."""
    t = 2 * np.arange(cell) + 1 - cell  # doubled offsets from the centre
    mask = t[:, None] ** 2 + t[None, :] ** 2 <= cell * cell
    mask.flags.writeable = False
    return mask


def render(state: WorldState) -> np.ndarray:
    """Render ``state`` as a ``uint8`` RGB frame of shape ``(height, width, 3)``.

    Draw order: textured background, brick-textured walls, object discs (in
    order, later on top), then the agent square with its darker border.
    """
    spec = state.spec
    cell = spec.cell
    frame = _static_layer(state.seed, spec, state.walls).copy()
    disc = _disc_mask(cell)
    for i, (r, c, _, _) in enumerate(state.objects):
        frame[r * cell : (r + 1) * cell, c * cell : (c + 1) * cell][disc] = OBJECT_COLORS[i]
    y, x = state.agent[0] * cell, state.agent[1] * cell
    frame[y : y + cell, x : x + cell] = AGENT_BORDER_COLOR
    frame[y + 1 : y + cell - 1, x + 1 : x + cell - 1] = AGENT_COLOR
    return frame


def rollout(state: WorldState, actions: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Simulate ``actions`` from ``state`` and render every frame.

    Returns ``(video, agent_positions)``: ``video`` is ``uint8`` with shape
    ``(len(actions) + 1, H, W, 3)`` and frame 0 equal to ``render(state)``;
    ``agent_positions`` is ``int64`` with shape ``(len(actions) + 1, 2)``
    holding the agent's top-left pixel ``(y, x)`` (border included) per frame.
    """
    try:
        acts = [_check_action(a, f"actions[{i}]") for i, a in enumerate(actions)]
    except TypeError:
        raise ValueError(f"actions must be a sequence of action ids, got {actions!r}") from None
    spec = state.spec
    video = np.empty((len(acts) + 1, spec.height, spec.width, 3), dtype=np.uint8)
    positions = np.empty((len(acts) + 1, 2), dtype=np.int64)
    for t in range(len(acts) + 1):
        if t:
            state = step(state, acts[t - 1])
        video[t] = render(state)
        positions[t] = (state.agent[0] * spec.cell, state.agent[1] * spec.cell)
    return video, positions
