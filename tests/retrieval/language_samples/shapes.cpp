#include <cmath>
#include <vector>
#include "geometry/point.hpp"

namespace shapes {

struct Extent {
    double width;
    double height;
};

class Circle {
public:
    explicit Circle(double radius) : radius_(radius) {}

    double area() const {
        return M_PI * radius_ * radius_;
    }

private:
    double radius_;
};

template <typename T>
T clamp(T value, T lo, T hi) {
    return value < lo ? lo : (value > hi ? hi : value);
}

}  // namespace shapes

enum class Unit { Metre, Foot };
