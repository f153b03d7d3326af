"""Message types of the arena wire protocol, version 1 (see ``SPEC.md``).

Every message is one UTF-8 JSON object with ``v`` (protocol version) and
``type``.  Here each message is a ``msgspec.Struct``; the structs of one
direction form a tagged union on ``type``, so one decoder call validates a
whole message.  Cards stay strings (``"7H"``, ``"TD"``, ``"JK"``, ``"2H*"``);
the engine parses them.  ``v`` defaults to :data:`PROTOCOL_VERSION` when a
struct is built in Python and is always written on the wire, first.

These structs are the one definition of every shape that travels: the
referee builds its messages from them (``arena.referee.wire``), the engine's
records hold the action and meld structs, and bots decode into them.  A
struct's field order is the order of its fields on the wire.

Bytes become these structs, and back, in ``protocol.codec``: ``encode``,
``decode_from_bot`` and ``decode_from_referee``; a message that cannot be
accepted is a :class:`MessageError`, defined here with the shapes.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

import msgspec
from msgspec import UnsetType

_T = TypeVar("_T")

PROTOCOL_VERSION = 1
SUPPORTED_VERSIONS: tuple[int, ...] = (1,)
MAX_MESSAGE_BYTES = 1 << 20  # 1 MiB, per message (one frame)
MAX_NESTING = 32
"""Deepest nesting of JSON arrays and objects a message may have (the message object itself is level 1)."""

ERROR_KINDS = ("illegal", "malformed", "oversized", "stale", "timeout", "version", "token", "protocol")
"""Values of ``Error.kind`` (what a bot can be told)."""

EVENT_KINDS = ("deal_start", "draw", "meld", "layoff", "swap", "discard", "rebuild", "deal_end", "forfeit")
"""Event kinds documented in version 1; bots must ignore kinds they do not know."""

# -- scalar types --------------------------------------------------------------

CARD_PATTERN = r"^(?:(?:[2-9TtJjQqKkAa]|10)[CcDdHhSs]\*?|[Jj][Kk])$"
Card = Annotated[
    str,
    msgspec.Meta(
        pattern=CARD_PATTERN,
        description='A card: rank + suit ("7H", "TD", "AS"), "JK" = joker, "2H*" = a wild_rank card used as a wild.',
    ),
]
StandsFor = Annotated[
    str,
    msgspec.Meta(
        pattern=r"^[2-9TJQKA][CDHS]?$",
        description='What a wild stands for: a card in a run ("7H"), a rank in a set ("7").',
    ),
]
Seat = Annotated[int, msgspec.Meta(ge=0, description="A seat number, 0..n-1 clockwise.")]
Seq = Annotated[int, msgspec.Meta(ge=0, description="Per-bot request counter set by the referee; replies echo it.")]
GameId = Annotated[str, msgspec.Meta(description="Game id set by the referee; replies echo it.")]
Version = Annotated[int, msgspec.Meta(ge=1, description="Protocol version.")]
Source = Literal["stock", "discard"]



# -- actions (inside a play reply) ---------------------------------------------


class Meld(msgspec.Struct, tag_field="type", tag="meld", omit_defaults=True):
    """Put down a new set or run from the hand. Runs are written lowest card first (RULES 4.2)."""

    cards: list[Card]
    kind: Annotated[
        Literal["set", "run"] | None,
        msgspec.Meta(description="Only needed when one natural card with wilds could be either; default: set."),
    ] = None


class Layoff(msgspec.Struct, tag_field="type", tag="layoff", omit_defaults=True):
    """Add cards from the hand to a meld on the table (by meld id)."""

    meld: Annotated[int, msgspec.Meta(ge=0, description="Id of a meld on the table.")]
    cards: list[Card]
    end: Annotated[
        Literal["low", "high"] | None,
        msgspec.Meta(description="For a run: the end the cards go to. Default: a natural card goes where it fits (low end if both), a wild to the high end."),
    ] = None


class Swap(msgspec.Struct, tag_field="type", tag="swap", omit_defaults=True):
    """Exchange a natural card from the hand for a wild in a meld; the wild goes to the hand."""

    meld: Annotated[int, msgspec.Meta(ge=0, description="Id of a meld on the table.")]
    card: Card
    wild: Annotated[
        Card | None,
        msgspec.Meta(description="Which wild to take, when the meld holds several the card could replace."),
    ] = None


Action = Meld | Layoff | Swap


# -- bot -> referee ------------------------------------------------------------


class Hello(msgspec.Struct, tag="hello", kw_only=True, tag_field="type"):
    """First message of a bot: who it is and which protocol versions it speaks."""

    v: Version = PROTOCOL_VERSION
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=64, description="Bot name, for logs and tables.")]
    versions: list[Version] | None = None
    author: Annotated[str, msgspec.Meta(max_length=200)] | None = None
    events: Annotated[
        bool,
        msgspec.Meta(description="False: send me no `event` messages (every request's observation is complete anyway)."),
    ] = True


class Draw(msgspec.Struct, tag="draw", kw_only=True, tag_field="type"):
    """Reply to a `draw` request: where to draw from."""

    v: Version = PROTOCOL_VERSION
    game: GameId
    seq: Seq
    source: Source


class Play(msgspec.Struct, tag="play", kw_only=True, tag_field="type"):
    """Reply to a `play` request: table actions in order, then the discard (null only when going out by table play)."""

    v: Version = PROTOCOL_VERSION
    game: GameId
    seq: Seq
    actions: list[Action]
    discard: Card | None


BotMessage = Hello | Draw | Play


# -- parts of referee messages -------------------------------------------------


class Clock(msgspec.Struct, kw_only=True):
    """Time control of a game, in milliseconds (see SPEC "Clocks")."""

    decision_ms: int
    bank_ms: int
    increment_ms: int
    grace_ms: int
    clock: str = "wall"  # "wall" or "cpu": what a decision is charged (SPEC "Clocks")


class DecisionClock(msgspec.Struct, kw_only=True):
    """Time for this decision: the per-decision limit and what is left in the bank."""

    decision_ms: int
    bank_ms_left: int


class TableMeld(msgspec.Struct, kw_only=True):
    """A meld on the table."""

    id: Annotated[int, msgspec.Meta(ge=0)]
    owner: Seat
    kind: Literal["set", "run"]
    cards: list[Card]
    wilds: Annotated[
        list[StandsFor | None],
        msgspec.Meta(
            description=(
                "Per card of `cards`: null for a natural card; for a wild, the card it stands for "
                'in a run ("7H"), or the rank it stands for in a set ("7").'
            )
        ),
    ]


class Observation(msgspec.Struct, kw_only=True):
    """Everything the asked seat may see, complete at every request."""

    seat: Seat
    deal: int
    turn: int
    phase: Literal["draw", "play"]
    dealer: Seat
    current: Seat
    hand: list[Card]
    drawn: Card | None
    took_discard: bool
    discard: list[Card]
    stock_size: int
    hand_sizes: list[int]
    totals: list[int]
    in_game: list[bool]
    opened: list[bool]
    melds: list[TableMeld]
    opening_requirement: int
    rebuilds: int
    must_go_out_to_meld: bool
    played_before: Annotated[
        bool, msgspec.Meta(description="You melded, laid off or swapped in an earlier turn of this deal (so going out now is not rummy).")
    ] = False
    legal_draws: list[Source]


# -- referee -> bot ------------------------------------------------------------


class Welcome(msgspec.Struct, tag="welcome", kw_only=True, tag_field="type"):
    """Answer to an accepted `hello`."""

    v: Version = PROTOCOL_VERSION
    name: str
    max_message_bytes: int
    protocol: Version


class Error(msgspec.Struct, tag="error", kw_only=True, tag_field="type"):
    """Something the bot sent (or failed to send) was not accepted."""

    # A field set to UNSET is left out of the message: a handshake refusal has no game
    # and seq, and only a version refusal has supported_versions. Decoded, a missing one is None.
    v: Version = PROTOCOL_VERSION
    game: GameId | UnsetType | None = None
    seq: Seq | UnsetType | None = None
    kind: Literal["illegal", "malformed", "oversized", "stale", "timeout", "version", "token", "protocol"]
    reason: str
    retry: bool
    supported_versions: list[Version] | UnsetType | None = None


class NewGame(msgspec.Struct, tag="new_game", kw_only=True, tag_field="type"):
    """A game starts: your seat, the players, the resolved rules and the time control."""

    v: Version = PROTOCOL_VERSION
    game: GameId
    seat: Seat
    players: list[str]
    rules: dict[str, Any]
    clock: Clock


class Request(msgspec.Struct, tag="request", kw_only=True, tag_field="type"):
    """The referee asks for a decision; answer with `draw` or `play` echoing `game` and `seq`."""

    v: Version = PROTOCOL_VERSION
    game: GameId
    seq: Seq
    decision: Literal["draw", "play"]
    observation: Observation
    clock: DecisionClock


class Event(msgspec.Struct, tag="event", kw_only=True, tag_field="type"):
    """A public event of a game; `event` is an object with `kind` and kind-specific fields (SPEC 6)."""

    v: Version = PROTOCOL_VERSION
    game: GameId
    event: KnownEvent


class GameOver(msgspec.Struct, tag="game_over", kw_only=True, tag_field="type"):
    """A game ended: placings by seat (1 = best, ties share) and final totals."""

    v: Version = PROTOCOL_VERSION
    game: GameId
    placings: list[int]
    totals: list[int]
    reason: str


class Shutdown(msgspec.Struct, tag="shutdown", kw_only=True, tag_field="type"):
    """The referee is done with this bot: close the socket and exit with code 0."""

    v: Version = PROTOCOL_VERSION
    reason: str


RefereeMessage = Welcome | Error | NewGame | Request | Event | GameOver | Shutdown


# -- event kinds (the `event` object of an Event message) -------------------


class _Ev(msgspec.Struct, kw_only=True, tag_field="kind"):
    pass


class DealStartEvent(_Ev, tag="deal_start"):
    """A deal was dealt: hand sizes by seat, the first upcard and the stock left."""

    deal: int
    dealer: Seat
    hand_sizes: list[int]
    upcard: Card
    stock_size: int


class DrawEvent(_Ev, tag="draw", omit_defaults=True):
    """A seat drew; `card` only when drawn from the discard pile (stock draws are secret)."""

    seat: Seat
    source: Source
    card: Card | None = None


class MeldEvent(_Ev, tag="meld"):
    """A seat put down a new meld."""

    meld: TableMeld
    seat: Seat


class LayoffEvent(_Ev, tag="layoff"):
    """A seat laid off cards on meld `meld` (by id)."""

    meld: int
    cards: list[Card]
    seat: Seat


class SwapEvent(_Ev, tag="swap"):
    """A seat put `card` into meld `meld` and took the wild `wild`."""

    meld: int
    card: Card
    wild: Card
    seat: Seat


class DiscardEvent(_Ev, tag="discard"):
    """A seat discarded `card` (it is the new top of the discard pile)."""

    seat: Seat
    card: Card


class RebuildEvent(_Ev, tag="rebuild"):
    """The stock ran out and was rebuilt from the discard pile."""

    stock_size: int
    upcard: Card | None


class DealEndEvent(_Ev, tag="deal_end"):
    """A deal ended: who went out (null: no one), the hand values and scores of the deal, new totals, who left."""

    deal: int
    out: Seat | None
    rummy: bool
    reason: str
    hand_values: list[int]
    scores: list[int]
    totals: list[int]
    eliminated: Annotated[list[Seat], msgspec.Meta(description="Seats out of the game at its target (end = elimination).")]


class ForfeitEvent(_Ev, tag="forfeit"):
    """A seat forfeited the game (placed last); `failure` is the failure kind (`kind` is taken by the event kind)."""

    seat: Seat
    failure: str
    reason: str


KnownEvent = (
    DealStartEvent | DrawEvent | MeldEvent | LayoffEvent | SwapEvent | DiscardEvent | RebuildEvent | DealEndEvent
    | ForfeitEvent
)

# -- errors ----------------------------------------------------------------------


class MessageError(ValueError):
    """A message could not be accepted.

    `kind` is the failure kind to record (``"malformed"`` or ``"oversized"``).
    ``shape`` is False when the bytes are not a UTF-8 JSON object at all, True
    when they are one but of the wrong shape (unknown type, missing or mistyped
    field).  `type`, `game` and `seq` are read from the object when
    present with the right JSON type (so a referee can tell a stale reply from
    a malformed one), else None.
    """

    def __init__(
        self,
        reason: str,
        *,
        kind: Literal["malformed", "oversized"] = "malformed",
        shape: bool = False,
        type: str | None = None,
        game: str | None = None,
        seq: int | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind
        self.shape = shape
        self.type = type
        self.game = game
        self.seq = seq
