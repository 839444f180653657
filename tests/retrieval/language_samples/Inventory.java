package com.example.inventory;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import static java.util.Objects.requireNonNull;
import com.example.inventory.model.*;

/** Something that can be priced. */
interface Priced {
    long priceCents();

    default boolean isFree() {
        return priceCents() == 0;
    }
}

/** Stock levels per item, with a reorder threshold. */
public class Inventory {
    private final Map<String, Integer> stock = new HashMap<>();
    private final int reorderLevel;

    public Inventory() {
        this(10);
    }

    public Inventory(int reorderLevel) {
        this.reorderLevel = reorderLevel;
    }

    public void add(String sku, int quantity) {
        requireNonNull(sku);
        stock.merge(sku, quantity, Integer::sum);
    }

    public Optional<Integer> quantityOf(String sku) {
        return Optional.ofNullable(stock.get(sku));
    }

    public boolean needsReorder(String sku) {
        return quantityOf(sku).map(q -> q < reorderLevel).orElse(true);
    }

    enum Status { IN_STOCK, LOW, OUT }

    record Line(String sku, int quantity) implements Priced {
        Line {
            if (quantity < 0) throw new IllegalArgumentException("negative");
        }

        public long priceCents() {
            return quantity * 100L;
        }
    }
}
