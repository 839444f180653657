using System;
using static System.Math;
using Json = System.Text.Json.JsonSerializer;

namespace Shop.Orders;

public interface IOrderRepository
{
    Order? Find(Guid id);
}

public record Order(Guid Id, decimal Total);

public class OrderService
{
    private readonly IOrderRepository _repository;

    public OrderService(IOrderRepository repository)
    {
        _repository = repository;
    }

    public decimal Discounted(Guid id, decimal rate)
    {
        var order = _repository.Find(id) ?? throw new ArgumentException(id.ToString());
        decimal Apply(decimal total) => Round(total * (1 - rate), 2);
        return Apply(order.Total);
    }
}

public enum OrderState { Open, Paid }
