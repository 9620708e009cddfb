// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/cli/arg_parser.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdio>

namespace wl::cli {

ArgParser::ArgParser(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)) {}

ArgParser& ArgParser::flag(const std::string& name, const std::string& help) {
  order_.push_back(name);
  opts_[name] = Opt{"", help, false, false};
  return *this;
}

ArgParser& ArgParser::option(const std::string& name, const std::string& metavar,
                             const std::string& help, bool repeatable) {
  order_.push_back(name);
  opts_[name] = Opt{metavar, help, true, repeatable};
  return *this;
}

ArgParser& ArgParser::positionals(const std::string& metavar, const std::string& help, int min,
                                  int max) {
  posMetavar_ = metavar;
  posHelp_ = help;
  posMin_ = min;
  posMax_ = max;
  return *this;
}

bool ArgParser::parse(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::fputs(usage().c_str(), stdout);
      return false;
    }
    if (a.size() > 2 && a.rfind("--", 0) == 0) {
      std::string name = a.substr(2), val;
      bool hasVal = false;
      if (auto eq = name.find('='); eq != std::string::npos) {
        val = name.substr(eq + 1);
        name = name.substr(0, eq);
        hasVal = true;
      }
      auto it = opts_.find(name);
      if (it == opts_.end()) throw UsageError(fmt::format("unknown option --{}", name));
      if (!it->second.takesValue) {
        if (hasVal) throw UsageError(fmt::format("option --{} takes no value", name));
        given_[name].push_back("");
        continue;
      }
      if (!hasVal) {
        if (i + 1 >= args.size())
          throw UsageError(fmt::format("option --{} needs a value ({})", name, it->second.metavar));
        val = args[++i];
      }
      if (!it->second.repeatable && given_.count(name))
        throw UsageError(fmt::format("option --{} given twice", name));
      given_[name].push_back(val);
      continue;
    }
    if (a == "--") {
      for (++i; i < args.size(); ++i)
        positional_.push_back(args[i]);
      break;
    }
    if (a.size() > 1 && a[0] == '-' && !(a[1] >= '0' && a[1] <= '9'))
      throw UsageError(fmt::format("unknown option {}", a));
    positional_.push_back(a);
  }
  const int n = static_cast<int>(positional_.size());
  if (n < posMin_)
    throw UsageError(posMin_ == 1 ? fmt::format("missing {}", posMetavar_)
                                  : fmt::format("expected at least {} {}", posMin_, posMetavar_));
  if (posMax_ >= 0 && n > posMax_)
    throw UsageError(posMax_ == 0
                         ? fmt::format("unexpected argument '{}'", positional_.front())
                         : fmt::format("too many arguments (at most {} {})", posMax_, posMetavar_));
  return true;
}

bool ArgParser::has(const std::string& name) const {
  return given_.count(name) > 0;
}

std::optional<std::string> ArgParser::value(const std::string& name) const {
  auto it = given_.find(name);
  if (it == given_.end() || it->second.empty()) return std::nullopt;
  return it->second.back();
}

std::vector<std::string> ArgParser::values(const std::string& name) const {
  auto it = given_.find(name);
  return it == given_.end() ? std::vector<std::string>{} : it->second;
}

std::optional<int> ArgParser::intValue(const std::string& name) const {
  auto v = value(name);
  if (!v) return std::nullopt;
  int out = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || p != v->data() + v->size())
    throw UsageError(fmt::format("option --{} expects an integer, got '{}'", name, *v));
  return out;
}

std::optional<double> ArgParser::doubleValue(const std::string& name) const {
  auto v = value(name);
  if (!v) return std::nullopt;
  try {
    size_t used = 0;
    const double d = std::stod(*v, &used);
    if (used != v->size()) throw std::invalid_argument("trailing");
    return d;
  } catch (const std::exception&) {
    throw UsageError(fmt::format("option --{} expects a number, got '{}'", name, *v));
  }
}

std::string ArgParser::usage() const {
  std::string u = fmt::format("usage: wattline {}", command_);
  for (const std::string& n : order_) {
    const Opt& o = opts_.at(n);
    u += o.takesValue ? fmt::format(" [--{} {}]", n, o.metavar) : fmt::format(" [--{}]", n);
  }
  if (!posMetavar_.empty()) {
    if (posMin_ == 0)
      u += fmt::format(" [{}{}]", posMetavar_, posMax_ != 1 ? " ..." : "");
    else
      u += fmt::format(" {}{}", posMetavar_, posMax_ != 1 ? " ..." : "");
  }
  u += "\n\n" + summary_ + "\n";
  if (!posMetavar_.empty()) u += fmt::format("\n  {:<24} {}\n", posMetavar_, posHelp_);
  for (const std::string& n : order_) {
    const Opt& o = opts_.at(n);
    const std::string lhs = o.takesValue ? fmt::format("--{} {}", n, o.metavar) : "--" + n;
    u += fmt::format("  {:<24} {}\n", lhs, o.help);
  }
  u += fmt::format("  {:<24} {}\n", "--help", "show this help");
  return u;
}

}  // namespace wl::cli
