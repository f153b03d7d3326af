"""{{name}}: an arena bot (ZeroMQ, through the protocol's Python client, protocol/SPEC.md section 13.2).

It draws from the stock, puts down every set it holds (three or four cards of a rank, one per suit)
when the rules let it meld freely, and discards its highest card. Change ``draw`` and ``play``.
Logs go to stderr (stdout is captured to a capped log file).
"""

import sys

from protocol.client import Bot

ORDER = "A23456789TJQK"


def rank(card):  # jokers count low, so they are kept
    return -1 if card == "JK" else ORDER.index(card[0])


class MyBot(Bot):
    name = "{{name}}"

    def on_new_game(self, msg):
        self.rules = msg.rules  # every option of protocol/SPEC.md section 7
        print(f"new game {msg.game}: seat {msg.seat} of {msg.players}", file=sys.stderr)

    def draw(self, obs):
        return "stock" if "stock" in obs.legal_draws else obs.legal_draws[0]

    def play(self, obs):
        hand = list(obs.hand)
        actions: list[dict] = []  # table actions, as in protocol/SPEC.md section 3.1
        most = self.rules.get("melds_per_turn") or len(hand)  # 0: no limit
        if obs.opening_requirement == 0 and not obs.must_go_out_to_meld:
            by_rank: dict[str, dict[str, str]] = {}  # rank -> {suit: card}
            for c in hand:
                if c != "JK":
                    by_rank.setdefault(c[0], {}).setdefault(c[1], c)  # one card per suit
            for cards in by_rank.values():
                meld = list(cards.values())[: self.rules.get("set_max") or 4]
                # keep a card to discard, whatever go_out says
                if len(meld) >= 3 and len(actions) < most and len(hand) > len(meld):
                    actions.append({"type": "meld", "cards": meld})
                    for c in meld:
                        hand.remove(c)
        # the card taken from the discard pile (or an equal one) may not be discarded this turn
        allowed = [c for c in hand if not (obs.took_discard and c == obs.drawn)]
        if not allowed:  # only copies of the taken card are left: play nothing this turn
            actions, allowed = [], [c for c in obs.hand if c != obs.drawn]
        return {"actions": actions, "discard": max(allowed, key=rank)}


if __name__ == "__main__":
    MyBot().run()
