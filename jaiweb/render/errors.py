"""What the render service answers instead of a picture. Each says what to do next."""

from __future__ import annotations


class RenderError(Exception):
    code = "render_error"


class InsufficientCredits(RenderError):
    code = "insufficient_credits"

    def __init__(self, balance: int, cost: int):
        self.balance = balance
        self.cost = cost
        super().__init__(
            f"not enough credits: a panel costs {cost}, the balance is {balance}; "
            "nothing was charged"
        )


class KeyReused(RenderError):
    code = "idempotency_key_reused"

    def __init__(self, key: str):
        self.key = key
        super().__init__(f"idempotency key {key!r} was used before with other parameters")


class RenderInProgress(RenderError):
    code = "in_progress"

    def __init__(self, key: str):
        self.key = key
        super().__init__(f"a render with key {key!r} is in progress; ask again later")


class RenderFailed(RenderError):
    code = "render_failed"

    def __init__(self, key: str, reason: str):
        self.key = key
        self.reason = reason
        super().__init__(f"the render with key {key!r} failed: {reason}; nothing was charged")
