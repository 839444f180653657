<?php

namespace App\Billing;

use App\Models\Product;
use App\Support\{Money, Currency as Cur};
require_once __DIR__ . '/bootstrap.php';

interface Discountable
{
    public function discount(): float;
}

trait Loggable
{
    protected function log(string $message): void
    {
        error_log($message);
    }
}

final class Cart implements Discountable
{
    use Loggable;

    private array $items = [];

    public function add(Product $product, int $qty = 1): void
    {
        $this->items[] = [$product, $qty];
        $this->log("added {$product->name}");
    }

    public function discount(): float
    {
        return count($this->items) > 5 ? 0.1 : 0.0;
    }
}

function cart_total(Cart $cart): Money
{
    return Money::sum(array_map(fn ($line) => $line[0]->price * $line[1], $cart->lines()));
}
