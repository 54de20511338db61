#include "fleet/prom_matrix.h"

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/strings.h"

namespace gpudoctor::fleet {
namespace {

using nlohmann::json;

// Where the parser is: one entry per open container, the current key of an object or "[]" of
// an array. The answer's shape: {"status", "error", "data": {"result": [ {"metric": {...},
// "values": [[t, "v"], ...]}, ... ]}}.
class MatrixSax : public nlohmann::json_sax<json> {
 public:
  explicit MatrixSax(
      const std::function<void(const PromLabels&, const std::vector<PromPoint>&)>& on_series)
      : on_series_(on_series) {}

  bool null() override { return Scalar(); }
  bool boolean(bool) override { return Scalar(); }
  bool number_integer(number_integer_t v) override { return Number(static_cast<double>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return Number(static_cast<double>(v)); }
  bool number_float(number_float_t v, const string_t&) override { return Number(v); }
  bool binary(binary_t&) override { return Scalar(); }
  bool string(string_t& s) override {
    if (path_.size() == 1 && path_[0] == "status") status_ = s;
    if (path_.size() == 1 && path_[0] == "error") error_ = Sanitize(s, 200);
    if (path_.size() == 5 && InSeries() && path_[3] == "metric") {
      labels_.emplace_back(path_[4], s);
    }
    if (InPoint()) {
      if (point_index_ == 1) {
        char* end = nullptr;
        double v = std::strtod(s.c_str(), &end);
        point_.value = v;
        value_ok_ = end != s.c_str() && *end == '\0' && std::isfinite(v);
      }
      ++point_index_;
    }
    return true;
  }
  bool start_object(std::size_t) override {
    if (path_.size() == 3 && InResult()) {
      labels_.clear();
      points_.clear();
    }
    path_.emplace_back();
    return true;
  }
  bool key(string_t& k) override {
    path_.back() = k;
    return true;
  }
  bool end_object() override {
    path_.pop_back();
    if (path_.size() == 3 && InResult()) on_series_(labels_, points_);
    return true;
  }
  bool start_array(std::size_t) override {
    if (path_.size() == 2 && path_[0] == "data" && path_[1] == "result") saw_result_ = true;
    if (path_.size() == 5 && InSeries() && path_[3] == "values") {
      point_ = PromPoint{};
      point_index_ = 0;
      time_ok_ = value_ok_ = false;
    }
    path_.push_back("[]");
    return true;
  }
  bool end_array() override {
    path_.pop_back();
    if (path_.size() == 5 && InSeries() && path_[3] == "values") {
      point_.valid = time_ok_ && value_ok_ && point_index_ == 2;
      points_.push_back(point_);
    }
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception&) override {
    error_position_ = position;
    return false;
  }

  std::string status_, error_;
  bool saw_result_ = false;
  size_t error_position_ = 0;

 private:
  bool InResult() const {
    return path_.size() >= 3 && path_[0] == "data" && path_[1] == "result" && path_[2] == "[]";
  }
  bool InSeries() const { return path_.size() >= 4 && InResult(); }
  bool InPoint() const {
    return path_.size() == 6 && InSeries() && path_[3] == "values" && path_[4] == "[]" &&
           path_[5] == "[]";
  }
  bool Scalar() {
    if (InPoint()) ++point_index_;
    return true;
  }
  bool Number(double v) {
    if (InPoint()) {
      if (point_index_ == 0) {
        point_.time_s = v;
        time_ok_ = v >= -9e18 && v <= 9e18;
      }
      ++point_index_;
    }
    return true;
  }

  const std::function<void(const PromLabels&, const std::vector<PromPoint>&)>& on_series_;
  std::vector<std::string> path_;
  PromLabels labels_;
  std::vector<PromPoint> points_;
  PromPoint point_;
  int point_index_ = 0;
  bool time_ok_ = false, value_ok_ = false;
};

}  // namespace

std::string PromLabel(const PromLabels& labels, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    for (const auto& [name, value] : labels) {
      if (name == k) return value;
    }
  }
  return {};
}

Status ReadPromMatrix(
    std::string_view what, const std::string& body,
    const std::function<void(const PromLabels&, const std::vector<PromPoint>&)>& on_series) {
  // Series are handed on only once the answer is known to be a success: Prometheus writes
  // "status" first, but a reader must not rely on key order, so the series wait in a list only
  // when they come before it.
  std::vector<std::pair<PromLabels, std::vector<PromPoint>>> early;
  bool status_seen = false;
  MatrixSax* sax_ptr = nullptr;
  std::function<void(const PromLabels&, const std::vector<PromPoint>&)> relay =
      [&](const PromLabels& l, const std::vector<PromPoint>& p) {
        if (!status_seen && sax_ptr->status_ == "success") status_seen = true;
        if (status_seen) {
          on_series(l, p);
        } else {
          early.emplace_back(l, p);
        }
      };
  MatrixSax sax(relay);
  sax_ptr = &sax;
  bool ok = json::sax_parse(body, &sax);
  if (!ok) {
    return ParseError("invalid JSON from Prometheus for " + std::string(what) + " (at byte " +
                      std::to_string(sax.error_position_) + ")");
  }
  if (sax.status_ != "success") {
    return ParseError("Prometheus answered with an error for " + std::string(what) +
                      (sax.error_.empty() ? "" : ": " + sax.error_));
  }
  if (!sax.saw_result_) return ParseError("no data.result in the answer for " + std::string(what));
  for (const auto& [l, p] : early) on_series(l, p);
  return Status::Ok();
}

}  // namespace gpudoctor::fleet
