#include "page_numbers.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>

namespace vla::report::pages {

namespace {
bool ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }
bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }

void walk_cell(const nlohmann::json& c, std::vector<std::string>& out) {
  auto add = [&](const std::string& s) {
    for (auto& t : number_tokens(s)) out.push_back(t);
  };
  if (c.is_string()) add(c.get<std::string>());
  else if (c.contains("shown")) add(c["shown"].get<std::string>());
  else if (c.contains("code")) add(c["code"].get<std::string>());
  else if (c.contains("quote")) add(c["quote"].get<std::string>());
}

void walk_nums(const nlohmann::json& j, std::vector<std::string>& bad) {
  if (j.is_object()) {
    if (j.contains("value") && j.contains("shown") && j["value"].is_number()) {
      const double v = j["value"];
      std::string shown = j["shown"];
      if (j.contains("unit")) shown = shown.substr(0, shown.size() - j["unit"].get<std::string>().size() - 1);
      const double s = std::strtod(shown.c_str(), nullptr);
      // The shown digits must be the value rounded: within one unit of the last shown digit.
      const auto e = shown.find_first_of("eE");
      const std::string mant = shown.substr(0, e);
      const auto dot = mant.find('.');
      const int decimals = dot == std::string::npos ? 0 : int(mant.size() - dot - 1);
      const int exp10 = e == std::string::npos ? 0 : std::atoi(shown.c_str() + e + 1);
      const double unit = std::pow(10.0, exp10 - decimals);
      if (!(std::fabs(s - v) <= 0.5 * unit * (1 + 1e-9))) bad.push_back(j.dump());
      return;
    }
    for (const auto& [k, x] : j.items()) walk_nums(x, bad);
  } else if (j.is_array()) {
    for (const auto& x : j) walk_nums(x, bad);
  }
}
}  // namespace

std::vector<std::string> number_tokens(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    if (!digit(s[i])) {
      ++i;
      continue;
    }
    if (i > 0 && ident(s[i - 1])) {  // part of a name (or of a number already read)
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
      continue;
    }
    std::size_t start = i;
    if (i > 0 && s[i - 1] == '-' && (i < 2 || !ident(s[i - 2]))) start = i - 1;
    while (i < s.size() && digit(s[i])) ++i;
    if (i + 1 < s.size() && s[i] == '.' && digit(s[i + 1])) {
      ++i;
      while (i < s.size() && digit(s[i])) ++i;
    }
    if (i + 1 < s.size() && (s[i] == 'e' || s[i] == 'E')) {
      std::size_t j = i + 1;
      if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
      if (j < s.size() && digit(s[j])) {
        i = j;
        while (i < s.size() && digit(s[i])) ++i;
      }
    }
    out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::string html_text(const std::string& h) {
  std::string t, src = h;
  const auto style = src.find("<style>"), style_end = src.find("</style>");
  if (style != std::string::npos && style_end != std::string::npos) src.erase(style, style_end + 8 - style);
  bool in_tag = false;
  for (std::size_t i = 0; i < src.size(); ++i) {
    if (src[i] == '<') {
      in_tag = true;
      t += ' ';  // a tag separates words (adjacent table cells)
    }
    if (!in_tag) t += src[i];
    if (src[i] == '>') in_tag = false;
  }
  std::string o;
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (t[k] == '&') {
      const auto semi = t.find(';', k);
      const std::string ent = t.substr(k, semi - k + 1);
      if (ent == "&amp;") o += '&';
      else if (ent == "&lt;") o += '<';
      else if (ent == "&gt;") o += '>';
      else if (ent == "&quot;") o += '"';
      else o += ent;
      k = semi;
    } else {
      o += t[k];
    }
  }
  return o;
}

std::vector<std::string> json_tokens(const nlohmann::json& r) {
  std::vector<std::string> out;
  for (const auto& s : r["sections"]) {
    for (const auto& b : s["blocks"]) {
      if (b["type"] == "paragraph") {
        for (const auto& [k, v] : b["values"].items()) walk_cell(v, out);
      } else if (b["type"] == "table") {
        for (const auto& row : b["rows"])
          for (const auto& c : row) walk_cell(c, out);
      } else if (b["type"] == "code") {
        walk_cell(b["text"], out);
      }
    }
  }
  return out;
}

std::vector<std::string> inconsistent_numbers(const nlohmann::json& r) {
  std::vector<std::string> bad;
  walk_nums(r["sections"], bad);
  return bad;
}

}  // namespace vla::report::pages
