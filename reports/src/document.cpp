// Number formatting, the no-free-number rule and the JSON form of the document.
#include "vla/report/document.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace vla::report {

namespace {

// Removes trailing zeros of a decimal fraction ("1.500" -> "1.5", "2.0" -> "2").
std::string strip_zeros(std::string s) {
  if (s.find('.') == std::string::npos) return s;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string show_value(double v, int sig) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (sig < 1) sig = 1;
  const double a = std::fabs(v);
  char buf[64];
  if (v == std::round(v) && a < 1e7) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  if (a >= 1e-3 && a < 1e5) {
    const int mag = static_cast<int>(std::floor(std::log10(a)));
    const int decimals = std::max(0, sig - 1 - mag);
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return strip_zeros(buf);
  }
  std::snprintf(buf, sizeof buf, "%.*e", sig - 1, v);
  std::string s = buf;
  const auto e = s.find('e');
  return strip_zeros(s.substr(0, e)) + s.substr(e);
}

bool ident_char(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::string show(const Num& n) {
  std::string s = show_value(n.value, n.sig);
  if (!n.unit.empty()) s += " " + n.unit;
  return s;
}

void require_no_free_number(const std::string& s, const std::string& where) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) continue;
    // Walk back over the digit run: a run glued to an identifier (fp32, d_h2, S_t1) is a name.
    std::size_t j = i;
    while (j > 0 && std::isdigit(static_cast<unsigned char>(s[j - 1]))) --j;
    if (j > 0 && ident_char(s[j - 1])) {
      while (i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) ++i;
      continue;
    }
    throw std::logic_error("report text has a literal number (put it in a Num): " + where + ": \"" + s + "\"");
  }
}

Paragraph para(std::string text, std::map<std::string, Cell> values) {
  require_no_free_number(text, "paragraph");
  for (const auto& [k, v] : values) {
    if (const auto* s = std::get_if<std::string>(&v)) require_no_free_number(*s, "paragraph value " + k);
  }
  Paragraph p{std::move(text), std::move(values)};
  (void)fill(p);  // every placeholder must resolve
  return p;
}

Cell text_cell(std::string s) {
  require_no_free_number(s, "table cell");
  return s;
}

std::string cell_text(const Cell& c) {
  if (const auto* s = std::get_if<std::string>(&c)) return *s;
  if (const auto* n = std::get_if<Num>(&c)) return show(*n);
  if (const auto* q = std::get_if<Quote>(&c)) return q->text;
  return std::get<Code>(c).text;
}

std::string fill(const Paragraph& p, const std::function<std::string(const std::string&)>& text,
                 const std::function<std::string(const Cell&)>& value) {
  std::string out, run;
  for (std::size_t i = 0; i < p.text.size(); ++i) {
    if (p.text[i] != '{') {
      run += p.text[i];
      continue;
    }
    const auto end = p.text.find('}', i);
    if (end == std::string::npos) throw std::logic_error("unterminated placeholder in: " + p.text);
    const std::string name = p.text.substr(i + 1, end - i - 1);
    const auto it = p.values.find(name);
    if (it == p.values.end()) throw std::logic_error("no value '" + name + "' for: " + p.text);
    out += text(run);
    run.clear();
    out += value(it->second);
    i = end;
  }
  return out + text(run);
}

std::string fill(const Paragraph& p) {
  return fill(p, [](const std::string& s) { return s; }, cell_text);
}

namespace {

nlohmann::json cell_json(const Cell& c) {
  if (const auto* s = std::get_if<std::string>(&c)) return *s;
  if (const auto* n = std::get_if<Num>(&c)) {
    nlohmann::json j = {{"value", n->value}, {"shown", show(*n)}};
    if (!n->unit.empty()) j["unit"] = n->unit;
    return j;
  }
  if (const auto* q = std::get_if<Quote>(&c)) return {{"quote", q->text}};
  return {{"code", std::get<Code>(c).text}};
}

nlohmann::json block_json(const Block& b) {
  if (const auto* p = std::get_if<Paragraph>(&b)) {
    nlohmann::json v = nlohmann::json::object();
    for (const auto& [k, c] : p->values) v[k] = cell_json(c);
    return {{"type", "paragraph"}, {"template", p->text}, {"values", v}};
  }
  if (const auto* t = std::get_if<Table>(&b)) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& r : t->rows) {
      nlohmann::json row = nlohmann::json::array();
      for (const auto& c : r) row.push_back(cell_json(c));
      rows.push_back(row);
    }
    return {{"type", "table"}, {"caption", t->caption}, {"columns", t->columns}, {"rows", rows}, {"row_links", t->row_links}};
  }
  if (const auto* f = std::get_if<Figure>(&b)) {
    return {{"type", "figure"}, {"caption", f->caption}, {"plot", to_json(f->plot)}};
  }
  return {{"type", "code"}, {"text", std::get<Code>(b).text}};
}

}  // namespace

nlohmann::json to_json(const Document& d) {
  nlohmann::json secs = nlohmann::json::array();
  for (const auto& s : d.sections) {
    nlohmann::json blocks = nlohmann::json::array();
    for (const auto& b : s.blocks) blocks.push_back(block_json(b));
    secs.push_back({{"id", s.id}, {"title", s.title}, {"status", s.status}, {"data", s.data}, {"blocks", blocks}});
  }
  return {{"generator", "vla report"}, {"schema", 1}, {"title", d.title}, {"meta", d.meta}, {"sections", secs}};
}

void validate(const Document& d) {
  require_no_free_number(d.title, "document title");
  for (const auto& s : d.sections) {
    require_no_free_number(s.title, "section title");
    for (const auto& b : s.blocks) {
      if (const auto* t = std::get_if<Table>(&b)) {
        require_no_free_number(t->caption, "table caption");
        for (const auto& c : t->columns) require_no_free_number(c, "table column");
        for (const auto& r : t->rows)
          for (const auto& c : r)
            if (const auto* str = std::get_if<std::string>(&c)) require_no_free_number(*str, "table cell");
      } else if (const auto* f = std::get_if<Figure>(&b)) {
        require_no_free_number(f->caption, "figure caption");
      }
    }
  }
}

}  // namespace vla::report
