// Reading numbers back from the rendered pages and from report.json, to check
// that they agree.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace vla::report::pages {

// Numeric tokens of a text: digit runs not glued to an identifier (fp32, d_h,
// J_1 are names), with a leading minus, a fraction and an exponent.
std::vector<std::string> number_tokens(const std::string& text);

// The visible text of an HTML page: no style, no tags (so no data URIs or
// attributes), entities decoded.
std::string html_text(const std::string& html);

// Number tokens of everything report.json says the pages show: the shown form
// of every number and every verbatim string of the sections' blocks.
std::vector<std::string> json_tokens(const nlohmann::json& report);

// Every number's `shown` form is its `value` rounded (not some other number):
// returns the offending entries, empty when all agree.
std::vector<std::string> inconsistent_numbers(const nlohmann::json& report);

}  // namespace vla::report::pages
