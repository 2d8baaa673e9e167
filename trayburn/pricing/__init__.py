"""Model names and prices: `z-ai/glm-5.2`, `cline-pass/glm-5.2`, `GLM-5.2` are one model, and a call
without a reported cost is estimated from its tokens at the price its route charges.

- `routes`: Cline's route names and id prefixes → genai-prices providers, in a stated order;
- `price`: a resolved price as plain data (rates by token kind, long-context tiers, periods) and the
  cost of one call;
- `genai`: the only module that imports genai-prices (its bundled snapshot, never its updater);
- `cache`: resolved prices kept in a JSON file, so a warm process never imports genai-prices;
- `keys`: model keys (`GLM-4.6` and `z-ai/glm-4.6` are `glm-4-6`);
- `book`: `PriceBook`, what the report uses (settings' prices and aliases win);
- `show`: what `trayburn prices MODEL` prints.
"""

from .book import PriceBook
from .price import Price, Rate, Rates, model_key

__all__ = ["PriceBook", "Price", "Rate", "Rates", "model_key"]
