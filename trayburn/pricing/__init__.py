"""Model names and prices: `z-ai/glm-5.2`, `cline-pass/glm-5.2`, `GLM-5.2` are one model, and a call
without a reported cost is estimated from its tokens at the price its route charges.
Never reaches the network: genai-prices' bundled snapshot only.

- `price`: model keys (`GLM-4.6` and `z-ai/glm-4.6` are `glm-4-6`), Cline's route names and id prefixes →
  genai-prices providers in a stated order, and a resolved price as plain data (rates by token kind,
  long-context tiers, periods) with the cost of one call;
- `book`: `PriceBook`, what the figures use (settings' prices and aliases win), the resolved prices kept in a
  JSON cache (a warm process never imports genai-prices), and the only import of genai-prices (its bundled
  snapshot, never its updater);
- `show`: what `trayburn prices` and `doctor`'s unpriced models say.
"""

from .book import PriceBook
from .price import Price, Rate, Rates, model_key

__all__ = ["PriceBook", "Price", "Rate", "Rates", "model_key"]
