// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/h5/h5.h"

#include "loaders/h5/read_driver.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

#include "loaders/core/error.h"

namespace wl::h5 {
namespace {

// Chunk cache for reading, per open dataset (readCacheBytes): at most this much.
constexpr size_t kReadCacheBytes = 32u << 20;
// A 1-D column is read front to back, a range at a time: a few chunks cover a range's ends.
constexpr size_t kColumnCacheChunks = 4;
constexpr size_t kReadCacheSlots = 12421;  // a prime, as the HDF5 docs advise
// Fixed-width strings (datasets and attributes) wider than this are refused: the width comes from
// the file and sizes an allocation (issue 16, docs/robustness.md).
constexpr size_t kMaxStringBytes = size_t{1} << 20;
// All the variable-length strings of one dataset (kernel names: ~100 bytes each).
constexpr size_t kMaxStringsBytes = size_t{1} << 30;

// The allowance of one dataset's variable-length strings (readStrings), and the allocator that
// holds HDF5 to it: HDF5 asks for each string's length + 1 bytes.
struct StringBudget {
  size_t left = kMaxStringsBytes;
  bool refused = false;
};

void* boundedStringAlloc(size_t size, void* info) {
  auto* budget = static_cast<StringBudget*>(info);
  if (size > kMaxStringBytes + 1 || size > budget->left) {
    budget->refused = true;
    return nullptr;
  }
  budget->left -= size;
  return std::malloc(size);
}

void freeString(void* p, void* /*info*/) {
  std::free(p);
}

[[noreturn]] void fail(hid_t loc, std::string_view what) {
  std::string msg = fmt::format("{}: {}", fileOf(loc), what);
  const std::string inner = lastError();
  if (!inner.empty()) msg += fmt::format(" ({})", inner);
  throw Error(msg);
}

std::string joinPath(hid_t loc, std::string_view name) {
  std::string base = pathOf(loc);
  if (base.empty() || base == "/") return "/" + std::string(name);
  return base + "/" + std::string(name);
}

herr_t walkInner(unsigned n, const H5E_error2_t* err, void* data) {
  auto* out = static_cast<std::string*>(data);
  if (n == 0 && err && err->desc) *out = err->desc;  // innermost first in H5E_WALK_UPWARD
  return 0;
}

Id datasetCreateProps(size_t chunk, const Layout& layout, int rank, const hsize_t* chunkDims) {
  Id dcpl(H5Pcreate(H5P_DATASET_CREATE));
  (void)chunk;
  H5Pset_chunk(dcpl, rank, chunkDims);
  if (layout.shuffle) H5Pset_shuffle(dcpl);
  if (layout.deflate > 0) H5Pset_deflate(dcpl, static_cast<unsigned>(layout.deflate));
  return dcpl;
}

// The read cache a dataset needs, from its chunks: a 1-D column keeps kColumnCacheChunks chunks;
// a 2-D pyramid level keeps one band of chunks across all its rows (what a heatmap tile of every
// GPU touches, so the next tile in the same chunks does not inflate them again), up to
// kReadCacheBytes. A run file keeps its datasets open, each with its cache filled by what was
// read, so a cache larger than the access pattern is memory held for nothing: at 32 MiB each,
// the 10^8-kernel run kept ~410 MB after one analysis (docs/performance.md, "10^8 kernels").
size_t readCacheBytes(hid_t dataset) {
  Id dcpl(H5Dget_create_plist(dataset));
  Id space(H5Dget_space(dataset));
  Id type(H5Dget_type(dataset));
  if (!dcpl.valid() || !space.valid() || !type.valid() || H5Pget_layout(dcpl) != H5D_CHUNKED)
    return 0;
  hsize_t chunk[2] = {1, 1}, dims[2] = {0, 0};
  const int rank = H5Pget_chunk(dcpl, 2, chunk);
  if (rank < 1 || rank > 2 || H5Sget_simple_extent_dims(space, dims, nullptr) != rank) return 0;
  const size_t chunkBytes = static_cast<size_t>(chunk[0]) * static_cast<size_t>(chunk[1]) *
                            std::max<size_t>(1, H5Tget_size(type));
  const size_t chunks =
      rank == 1 ? kColumnCacheChunks
                : static_cast<size_t>((dims[0] + chunk[0] - 1) / std::max<hsize_t>(1, chunk[0]));
  return std::clamp<size_t>(chunks * chunkBytes, 1u << 20, kReadCacheBytes);
}

Id stringType() {
  Id t(H5Tcopy(H5T_C_S1));
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

}  // namespace

std::recursive_mutex& lock() {
  static std::recursive_mutex m;
  return m;
}

void silenceErrors() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

namespace {

// HDF5 keeps its error printing per thread: readers running on a thread that opened no file (the
// tile loader, background jobs) would print HDF5's error stack to stderr on a damaged region;
// the message Wattline shows already carries the inner error (fail()).
void silenceThisThread() {
  thread_local bool silenced = false;
  if (!silenced) {
    silenceErrors();
    silenced = true;
  }
}

}  // namespace

std::string lastError() {
  std::string out;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walkInner, &out);
  H5Eclear2(H5E_DEFAULT);
  return out;
}

Id& Id::operator=(Id&& o) noexcept {
  if (this != &o) {
    close();
    id_ = o.id_;
    o.id_ = H5I_INVALID_HID;
  }
  return *this;
}

void Id::close() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE:
      H5Fclose(id_);
      break;
    case H5I_GROUP:
      H5Gclose(id_);
      break;
    case H5I_DATASET:
      H5Dclose(id_);
      break;
    case H5I_DATASPACE:
      H5Sclose(id_);
      break;
    case H5I_DATATYPE:
      H5Tclose(id_);
      break;
    case H5I_ATTR:
      H5Aclose(id_);
      break;
    case H5I_GENPROP_LST:
      H5Pclose(id_);
      break;
    default:
      H5Idec_ref(id_);
      break;
  }
  id_ = H5I_INVALID_HID;
}

namespace {

// Keeps the calling thread's HDF5 error stack across the API calls a message is built with:
// every HDF5 API call clears that stack on entry, and fail() reports its innermost error, so
// naming the dataset that failed (H5Iget_name, H5Fget_name) must not erase why it failed.
class KeepErrors {
 public:
  KeepErrors() : saved_(H5Eget_current_stack()) {}
  ~KeepErrors() {
    if (saved_ >= 0) H5Eset_current_stack(saved_);  // restores it, and closes the copy
  }
  KeepErrors(const KeepErrors&) = delete;
  KeepErrors& operator=(const KeepErrors&) = delete;

 private:
  hid_t saved_;
};

}  // namespace

std::string pathOf(hid_t loc) {
  const KeepErrors keep;
  const ssize_t n = H5Iget_name(loc, nullptr, 0);
  if (n <= 0) return {};
  std::string s(static_cast<size_t>(n) + 1, '\0');
  H5Iget_name(loc, s.data(), s.size());
  s.resize(static_cast<size_t>(n));
  return s;
}

std::string fileOf(hid_t loc) {
  const KeepErrors keep;
  const ssize_t n = H5Fget_name(loc, nullptr, 0);
  if (n <= 0) return "(hdf5)";
  std::string s(static_cast<size_t>(n) + 1, '\0');
  H5Fget_name(loc, s.data(), s.size());
  s.resize(static_cast<size_t>(n));
  return s;
}

Id createFile(const std::filesystem::path& path) {
  silenceErrors();
  Id fapl(H5Pcreate(H5P_FILE_ACCESS));
  // HDF5 1.10 file format: its compact chunk indexes (single chunk, fixed and extensible arrays)
  // keep small datasets about 3x smaller than the 1.8 format's B-trees. Readable by HDF5 >= 1.10,
  // h5py included.
  H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_LATEST);
  Id f(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
  if (!f.valid()) {
    throw Error(fmt::format("{}: cannot create file ({})", path.string(), lastError()));
  }
  return f;
}

namespace {

// HDF5 sizes its first allocation from the version 0/1 superblock's fields before it checks them
// against the file: a 54-byte file found by the run_file fuzzer made H5Fopen allocate and touch
// 2.4 GB for 5 s before it failed. A superblock at offset 0 (where RunWriter puts it) of version 0
// or 1 must therefore fit in the file, with field sizes HDF5 allows and every address it defines
// inside the file. Version 2 and 3 superblocks (RunWriter writes 3) have a checksum HDF5 checks
// first. Cost: one read of at most 128 bytes.
void checkSuperblock(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char b[128] = {};
  in.read(reinterpret_cast<char*>(b), sizeof b);
  const auto n = static_cast<size_t>(in.gcount());
  static constexpr unsigned char kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  if (n < 9 || std::memcmp(b, kSignature, 8) != 0 || b[8] > 1) return;
  std::error_code ec;
  const uint64_t fileSize = std::filesystem::file_size(path, ec);
  auto damaged = [&](std::string_view what) {
    return Error(
        fmt::format("{}: cannot open as HDF5, the file may be truncated or damaged "
                    "(superblock: {})",
                    path.string(), what));
  };
  if (n < 24) throw damaged("shorter than its fixed fields");
  const unsigned offsets = b[13], lengths = b[14];
  auto validSize = [](unsigned v) { return v == 2 || v == 4 || v == 8; };
  if (!validSize(offsets) || !validSize(lengths)) throw damaged("field sizes other than 2, 4 or 8");
  // Fixed part, 4 addresses, then the root group's symbol table entry (2 offsets, 4 + 4 + 16
  // bytes).
  const size_t addresses = b[8] == 0 ? 24 : 28;
  const size_t size = addresses + 4 * offsets + 2 * offsets + 24;
  if (n < size || (!ec && fileSize < size)) throw damaged("cut short");
  for (int k = 0; k < 4; ++k) {
    uint64_t a = 0;
    bool undefined = true;
    for (unsigned j = 0; j < offsets; ++j) {
      const unsigned char c = b[addresses + k * offsets + j];
      a |= static_cast<uint64_t>(c) << (8 * j);
      undefined = undefined && c == 0xff;
    }
    if (undefined) continue;
    // The end-of-file address (k == 2) may equal the size; the others lie inside the file.
    if (!ec && (k == 2 ? a > fileSize : a >= fileSize))
      throw damaged(
          fmt::format("an address past the end of the file ({} of {} bytes)", a, fileSize));
  }
}

}  // namespace

Id openFile(const std::filesystem::path& path) {
  silenceErrors();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw Error(fmt::format("{}: no such file", path.string()));
  if (std::filesystem::is_directory(path, ec))
    throw Error(fmt::format("{}: is a folder, expected a Wattline run file (.h5)", path.string()));
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) throw Error(fmt::format("{}: cannot be read (permission denied?)", path.string()));
  }
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw Error(
        fmt::format("{}: not an HDF5 file (expected a Wattline run .h5; use "
                    "'wattline import' for traces and telemetry logs)",
                    path.string()));
  }
  checkSuperblock(path);
  Id fapl(readDriverAccessList());  // reads that check what HDF5 1.10 does not (read_driver.h)
  Id f(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl));
  if (!f.valid()) {
    throw Error(fmt::format("{}: cannot open as HDF5, the file may be truncated or damaged ({})",
                            path.string(), lastError()));
  }
  return f;
}

Id openFileForUpdate(const std::filesystem::path& path) {
  silenceErrors();
  Id fapl(H5Pcreate(H5P_FILE_ACCESS));
  H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_LATEST);
  Id f(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl));
  if (!f.valid())
    throw Error(fmt::format("{}: cannot open for writing ({})", path.string(), lastError()));
  return f;
}

Id createGroup(hid_t loc, std::string_view name) {
  Id g(H5Gcreate2(loc, std::string(name).c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!g.valid()) fail(loc, fmt::format("cannot create group {}", joinPath(loc, name)));
  return g;
}

Id openGroup(hid_t loc, std::string_view name) {
  if (!exists(loc, name)) fail(loc, fmt::format("missing required group {}", joinPath(loc, name)));
  Id g(H5Gopen2(loc, std::string(name).c_str(), H5P_DEFAULT));
  if (!g.valid()) fail(loc, fmt::format("cannot open group {}", joinPath(loc, name)));
  return g;
}

Id openDataset(hid_t loc, std::string_view name) {
  if (!exists(loc, name))
    fail(loc, fmt::format("missing required dataset {}", joinPath(loc, name)));
  Id d(H5Dopen2(loc, std::string(name).c_str(), H5P_DEFAULT));
  if (!d.valid()) fail(loc, fmt::format("cannot open dataset {}", joinPath(loc, name)));
  return d;
}

Id openDatasetForReading(hid_t loc, std::string_view name) {
  // Opened once to learn its chunks (no cache is filled by that), then again with its read
  // cache unless the default one already has that size (most 1-D columns: 1 MiB).
  Id d = openDataset(loc, name);
  const size_t cache = readCacheBytes(d);
  size_t slots = 0, current = 0;
  double w0 = 0;
  Id defaults(H5Dget_access_plist(d));
  if (cache == 0 || (defaults.valid() && H5Pget_chunk_cache(defaults, &slots, &current, &w0) >= 0 &&
                     current == cache))
    return d;
  d = Id();  // a dataset opened twice shares the first open's cache: close it first
  Id dapl(H5Pcreate(H5P_DATASET_ACCESS));
  H5Pset_chunk_cache(dapl, kReadCacheSlots, cache, 0.75);
  Id sized(H5Dopen2(loc, std::string(name).c_str(), dapl));
  if (!sized.valid()) fail(loc, fmt::format("cannot open dataset {}", joinPath(loc, name)));
  return sized;
}

bool exists(hid_t loc, std::string_view path) {
  // H5Lexists must be asked one path component at a time.
  std::string prefix;
  size_t pos = 0;
  while (pos <= path.size()) {
    const size_t slash = path.find('/', pos);
    const std::string_view part =
        path.substr(pos, slash == std::string_view::npos ? std::string_view::npos : slash - pos);
    if (!part.empty()) {
      if (!prefix.empty()) prefix += '/';
      prefix += part;
      if (H5Lexists(loc, prefix.c_str(), H5P_DEFAULT) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return false;
      }
    }
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return !prefix.empty();
}

namespace {

void writeScalarAttr(hid_t loc, std::string_view name, hid_t type, const void* v) {
  const std::string n(name);
  if (H5Aexists(loc, n.c_str()) > 0) H5Adelete(loc, n.c_str());
  Id space(H5Screate(H5S_SCALAR));
  Id a(H5Acreate2(loc, n.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT));
  if (!a.valid() || H5Awrite(a, type, v) < 0)
    fail(loc, fmt::format("cannot write attribute {} of {}", name, pathOf(loc)));
}

Id openAttr(hid_t loc, std::string_view name) {
  const std::string n(name);
  if (H5Aexists(loc, n.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return Id();
  }
  return Id(H5Aopen(loc, n.c_str(), H5P_DEFAULT));
}

}  // namespace

void setAttr(hid_t loc, std::string_view name, int64_t v) {
  writeScalarAttr(loc, name, H5T_NATIVE_INT64, &v);
}

void setAttr(hid_t loc, std::string_view name, double v) {
  writeScalarAttr(loc, name, H5T_NATIVE_DOUBLE, &v);
}

void setAttr(hid_t loc, std::string_view name, std::string_view v) {
  Id t = stringType();
  const std::string s(v);
  const char* p = s.c_str();
  writeScalarAttr(loc, name, t, &p);
}

bool hasAttr(hid_t loc, std::string_view name) {
  const bool yes = H5Aexists(loc, std::string(name).c_str()) > 0;
  H5Eclear2(H5E_DEFAULT);
  return yes;
}

std::optional<int64_t> attrInt(hid_t loc, std::string_view name) {
  Id a = openAttr(loc, name);
  if (!a.valid()) return std::nullopt;
  Id type(H5Aget_type(a));
  if (H5Tget_class(type) != H5T_INTEGER && H5Tget_class(type) != H5T_FLOAT) return std::nullopt;
  Id space(H5Aget_space(a));
  if (H5Sget_simple_extent_npoints(space) != 1) return std::nullopt;
  int64_t v = 0;
  if (H5Aread(a, H5T_NATIVE_INT64, &v) < 0)
    fail(loc, fmt::format("cannot read attribute {} of {}", name, pathOf(loc)));
  return v;
}

std::optional<double> attrDouble(hid_t loc, std::string_view name) {
  Id a = openAttr(loc, name);
  if (!a.valid()) return std::nullopt;
  Id type(H5Aget_type(a));
  if (H5Tget_class(type) != H5T_INTEGER && H5Tget_class(type) != H5T_FLOAT) return std::nullopt;
  Id space(H5Aget_space(a));
  if (H5Sget_simple_extent_npoints(space) != 1) return std::nullopt;
  double v = 0;
  if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0)
    fail(loc, fmt::format("cannot read attribute {} of {}", name, pathOf(loc)));
  return v;
}

std::optional<std::string> attrString(hid_t loc, std::string_view name) {
  Id a = openAttr(loc, name);
  if (!a.valid()) return std::nullopt;
  Id ftype(H5Aget_type(a));
  if (H5Tget_class(ftype) != H5T_STRING) return std::nullopt;
  Id space(H5Aget_space(a));
  if (H5Sget_simple_extent_npoints(space) != 1) return std::nullopt;
  if (H5Tis_variable_str(ftype) > 0) {
    Id mtype = stringType();
    char* p = nullptr;
    if (H5Aread(a, mtype, &p) < 0)  // there but unreadable: damaged, not absent
      fail(loc, fmt::format("cannot read attribute {} of {}", name, pathOf(loc)));
    std::string s = p ? p : "";
    H5free_memory(p);
    return s;
  }
  const size_t n = H5Tget_size(ftype);
  if (n > kMaxStringBytes)
    fail(loc, fmt::format("attribute {} of {} is a string of {} bytes, more than the {} Wattline "
                          "reads (the file is damaged)",
                          name, pathOf(loc), n, kMaxStringBytes));
  std::string s(n, '\0');
  Id mtype(H5Tcopy(H5T_C_S1));
  H5Tset_size(mtype, n);
  if (H5Aread(a, mtype, s.data()) < 0)
    fail(loc, fmt::format("cannot read attribute {} of {}", name, pathOf(loc)));
  s.resize(std::strlen(s.c_str()));
  return s;
}

std::vector<hsize_t> shapeOf(hid_t dset) {
  Id space(H5Dget_space(dset));
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) return {};
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return dims;
}

void writeRaw(hid_t loc, std::string_view name, hid_t memType, hid_t fileType, const void* data,
              size_t n, const Layout& layout) {
  const hsize_t dims[1] = {n};
  Id space(H5Screate_simple(1, dims, nullptr));
  Id dcpl;
  if (n > 0) {
    const hsize_t chunk[1] = {std::min<hsize_t>(n, layout.chunk)};
    dcpl = datasetCreateProps(layout.chunk, layout, 1, chunk);
  } else {
    dcpl = Id(H5Pcreate(H5P_DATASET_CREATE));
  }
  Id d(H5Dcreate2(loc, std::string(name).c_str(), fileType, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
  if (!d.valid()) fail(loc, fmt::format("cannot create dataset {}", joinPath(loc, name)));
  if (n > 0 && H5Dwrite(d, memType, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    fail(loc, fmt::format("cannot write dataset {}", joinPath(loc, name)));
}

void readRaw(hid_t dset, hid_t memType, void* out, size_t offset, size_t count) {
  silenceThisThread();
  const auto shape = shapeOf(dset);
  if (shape.size() != 1)
    fail(dset, fmt::format("dataset {} has {} dimensions, expected 1", pathOf(dset), shape.size()));
  if (offset + count > shape[0] || offset + count < offset)
    fail(dset, fmt::format("dataset {} has {} elements, expected at least {}", pathOf(dset),
                           shape[0], offset + count));
  if (count == 0) return;
  Id fspace(H5Dget_space(dset));
  const hsize_t start[1] = {offset};
  const hsize_t cnt[1] = {count};
  H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, cnt, nullptr);
  Id mspace(H5Screate_simple(1, cnt, nullptr));
  if (H5Dread(dset, memType, mspace, fspace, H5P_DEFAULT, out) < 0)
    fail(dset, fmt::format("cannot read dataset {} (elements {}..{}), the file may be damaged",
                           pathOf(dset), offset, offset + count));
}

void writeStrings(hid_t loc, std::string_view name, const std::vector<std::string>& strings,
                  const Layout& layout) {
  std::vector<const char*> ptrs;
  ptrs.reserve(strings.size());
  for (const auto& s : strings)
    ptrs.push_back(s.c_str());
  Id t = stringType();
  Layout l = layout;
  l.shuffle = false;
  l.chunk = std::min<size_t>(layout.chunk, 4096);
  writeRaw(loc, name, t, t, ptrs.data(), ptrs.size(), l);
}

namespace {

// Checks the lengths of the variable-length strings dataset `d` stores (its first n elements),
// read from its raw bytes before HDF5 converts them: HDF5 1.10 allocates and zeroes a string's
// stated length (up to 4 GiB) before it reads the string, and a dataset's chunks have no
// checksum. On disk each element is a 4-byte length, the global heap collection's address and a
// 4-byte index (HDF5 file format specification, "Variable-length data"). Chunks with no filter or
// deflate only (what RunWriter writes) and contiguous data are checked; anything else is left to
// HDF5, as is a chunk that cannot be read or inflated (HDF5 then fails the read itself). "" or
// what is wrong.
std::string stringLengthProblem(hid_t d, size_t n) {
  Id fileId(H5Iget_file_id(d));
  Id fcpl(H5Fget_create_plist(fileId));
  size_t addrBytes = 8, sizeBytes = 8;
  if (!fcpl.valid() || H5Pget_sizes(fcpl, &addrBytes, &sizeBytes) < 0) return "";
  if (addrBytes > 8) return "";
  const size_t elem = 4 + addrBytes + 4;
  uint64_t total = 0;
  // The global heap collections the strings point into, each read once: its objects' sizes, or
  // what is wrong with it. HDF5 1.10.8 takes a string's object index on trust (an index the
  // collection does not hold read wild memory) and copies the whole object into a buffer of the
  // string's stated length.
  std::ifstream file;
  std::map<uint64_t, std::pair<std::vector<uint64_t>, std::string>> collections;
  auto collection = [&](uint64_t at) -> const std::pair<std::vector<uint64_t>, std::string>& {
    auto [it, added] = collections.try_emplace(at);
    if (!added) return it->second;
    auto& [sizes, problem] = it->second;
    if (!file.is_open()) file.open(fileOf(d), std::ios::binary);
    std::vector<uint8_t> block(16);
    file.clear();
    file.seekg(static_cast<std::streamoff>(std::min<uint64_t>(at, INT64_MAX)));
    const uint64_t size =
        file.read(reinterpret_cast<char*>(block.data()), 16) ? globalHeapSize(block) : 0;
    if (size == 0) {
      problem = fmt::format("no global heap collection at byte {}", at);
      return it->second;
    }
    if (size < 16 || size > kMaxStringsBytes) {
      problem = fmt::format("the global heap collection at byte {} states {} bytes", at, size);
      return it->second;
    }
    block.resize(static_cast<size_t>(size));
    if (!file.read(reinterpret_cast<char*>(block.data() + 16),
                   static_cast<std::streamsize>(size - 16))) {
      problem = fmt::format("the global heap collection at byte {} runs past the file's end", at);
      return it->second;
    }
    if (std::string p = globalHeapProblem(block, &sizes); !p.empty())
      problem = fmt::format("damaged global heap collection at byte {}: {}", at, p);
    return it->second;
  };
  auto check = [&](const uint8_t* p, size_t count, size_t first) -> std::string {
    for (size_t i = 0; i < count; ++i) {
      const uint8_t* e = p + i * elem;
      const uint64_t len = littleEndian(e, 4);
      total += len;
      if (len > kMaxStringBytes)
        return fmt::format("string {} is {} bytes long, more than the {} Wattline reads", first + i,
                           len, kMaxStringBytes);
      if (total > kMaxStringsBytes)
        return fmt::format("its strings hold more than the {} bytes Wattline reads",
                           kMaxStringsBytes);
      const uint64_t at = littleEndian(e + 4, addrBytes);
      if (at == 0) continue;  // no data: an empty string
      const uint64_t index = littleEndian(e + 4 + addrBytes, 4);
      const auto& [sizes, problem] = collection(at);
      if (!problem.empty()) return fmt::format("string {}: {}", first + i, problem);
      if (index == 0 || index >= sizes.size() || sizes[index] == kNoObject)
        return fmt::format(
            "string {} is object {} of the global heap collection at byte {}, "
            "which holds no such object",
            first + i, index, at);
      if (sizes[index] != len)
        return fmt::format("string {} is {} bytes long, but its global heap object holds {}",
                           first + i, len, sizes[index]);
    }
    return "";
  };
  Id dcpl(H5Dget_create_plist(d));
  const H5D_layout_t layout = H5Pget_layout(dcpl);
  if (layout == H5D_CONTIGUOUS) {
    const haddr_t at = H5Dget_offset(d);
    if (at == HADDR_UNDEF) return "";
    std::ifstream in(fileOf(d), std::ios::binary);
    in.seekg(static_cast<std::streamoff>(at));
    std::vector<uint8_t> buf(4096 * elem);
    for (size_t first = 0; first < n && in;) {
      const size_t count = std::min<size_t>(4096, n - first);
      if (!in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(count * elem)))
        return "";
      if (std::string p = check(buf.data(), count, first); !p.empty()) return p;
      first += count;
    }
    return "";
  }
  if (layout != H5D_CHUNKED) return "";  // compact: inside the (checksummed) object header
  hsize_t chunk = 0;
  if (H5Pget_chunk(dcpl, 1, &chunk) != 1 || chunk == 0) return "";
  int deflateAt = -1;
  const int filters = H5Pget_nfilters(dcpl);
  for (int k = 0; k < filters; ++k) {
    unsigned flags = 0, config = 0;
    size_t values = 0;
    if (H5Pget_filter2(dcpl, static_cast<unsigned>(k), &flags, &values, nullptr, 0, nullptr,
                       &config) != H5Z_FILTER_DEFLATE ||
        deflateAt >= 0)
      return "";
    deflateAt = k;
  }
  Id space(H5Dget_space(d));
  hsize_t chunks = 0;
  if (H5Dget_num_chunks(d, space, &chunks) < 0) return "";
  const size_t rawBytes = static_cast<size_t>(chunk) * elem;
  std::vector<uint8_t> stored, raw(rawBytes);
  for (hsize_t c = 0; c < chunks; ++c) {
    hsize_t offset = 0, size = 0;
    unsigned mask = 0;
    haddr_t addr = 0;
    if (H5Dget_chunk_info(d, space, c, &offset, &mask, &addr, &size) < 0 || offset >= n) return "";
    if (size > rawBytes + rawBytes / 2 + 1024)  // deflate never grows data that much
      return fmt::format("its chunk at element {} stores {} bytes, more than {} elements need",
                         offset, size, chunk);
    stored.resize(static_cast<size_t>(size));
    uint32_t skipped = 0;
    if (H5Dread_chunk(d, H5P_DEFAULT, &offset, &skipped, stored.data()) < 0) return "";
    const uint8_t* p = stored.data();
    size_t have = stored.size();
    if (deflateAt >= 0 && (skipped & (1u << deflateAt)) == 0) {
      uLongf out = static_cast<uLongf>(rawBytes);
      const int z = uncompress(raw.data(), &out, stored.data(), static_cast<uLong>(stored.size()));
      if (z != Z_OK && z != Z_BUF_ERROR) return "";
      p = raw.data();
      have = static_cast<size_t>(out);
    }
    const size_t count = std::min<size_t>({static_cast<size_t>(chunk), n - offset, have / elem});
    if (std::string problem = check(p, count, static_cast<size_t>(offset)); !problem.empty())
      return problem;
  }
  return "";
}

}  // namespace

std::vector<std::string> readStrings(hid_t loc, std::string_view name) {
  silenceThisThread();
  Id d = openDataset(loc, name);
  Id ftype(H5Dget_type(d));
  if (H5Tget_class(ftype) != H5T_STRING)
    fail(loc, fmt::format("dataset {} holds {}, expected strings", joinPath(loc, name),
                          H5Tget_class(ftype) == H5T_INTEGER ? "integers" : "non-strings"));
  const auto shape = shapeOf(d);
  if (shape.size() != 1)
    fail(loc, fmt::format("dataset {} is not one-dimensional", joinPath(loc, name)));
  const size_t n = shape[0];
  std::vector<std::string> out;
  if (n == 0) return out;
  const bool variable = H5Tis_variable_str(ftype) > 0;
  const size_t width = variable ? sizeof(char*) : H5Tget_size(ftype);
  if (width > kMaxStringBytes)
    fail(loc, fmt::format("dataset {} holds strings of {} bytes, more than the {} Wattline reads "
                          "(the file is damaged)",
                          joinPath(loc, name), width, kMaxStringBytes));
  out.reserve(n);
  if (variable) {
    // Each string's length comes from the file, unchecked (a dataset's chunks have no checksum),
    // and HDF5 allocates it before it reads: strings are allocated here, and one longer than
    // kMaxStringBytes, or more than kMaxStringsBytes in all, is refused.
    if (const std::string problem = stringLengthProblem(d, n); !problem.empty())
      fail(loc, fmt::format("dataset {}: {} (the file is damaged)", joinPath(loc, name), problem));
    StringBudget budget;
    Id dxpl(H5Pcreate(H5P_DATASET_XFER));
    H5Pset_vlen_mem_manager(dxpl, boundedStringAlloc, &budget, freeString, nullptr);
    std::vector<char*> ptrs(n, nullptr);
    Id mtype = stringType();
    Id space(H5Dget_space(d));
    const herr_t read = H5Dread(d, mtype, H5S_ALL, H5S_ALL, dxpl, ptrs.data());
    if (read >= 0)
      for (char* p : ptrs)
        out.emplace_back(p ? p : "");
    H5Dvlen_reclaim(mtype, space, dxpl, ptrs.data());  // what a failed read had read, too
    if (budget.refused)
      fail(loc, fmt::format("dataset {} holds a string longer than {} bytes, or more than {} "
                            "bytes of strings, more than Wattline reads (the file is damaged)",
                            joinPath(loc, name), kMaxStringBytes, kMaxStringsBytes));
    if (read < 0) fail(loc, fmt::format("cannot read strings {}", joinPath(loc, name)));
  } else {
    const size_t w = H5Tget_size(ftype);
    std::vector<char> buf(n * w);
    Id mtype(H5Tcopy(H5T_C_S1));
    H5Tset_size(mtype, w);
    if (H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0)
      fail(loc, fmt::format("cannot read strings {}", joinPath(loc, name)));
    for (size_t i = 0; i < n; ++i) {
      const char* p = buf.data() + i * w;
      out.emplace_back(p, strnlen(p, w));
    }
  }
  return out;
}

Appender::Appender(hid_t loc, std::string_view name, hid_t memType, hid_t fileType,
                   const Layout& layout)
    : memType_(memType) {
  const hsize_t dims[1] = {0};
  const hsize_t maxDims[1] = {H5S_UNLIMITED};
  Id space(H5Screate_simple(1, dims, maxDims));
  const hsize_t chunk[1] = {layout.chunk};
  Id dcpl = datasetCreateProps(layout.chunk, layout, 1, chunk);
  ds_ = Id(
      H5Dcreate2(loc, std::string(name).c_str(), fileType, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
  if (!ds_.valid()) fail(loc, fmt::format("cannot create dataset {}", joinPath(loc, name)));
}

void Appender::append(const void* data, size_t n) {
  if (n == 0) return;
  const hsize_t newSize[1] = {size_ + n};
  if (H5Dset_extent(ds_, newSize) < 0) fail(ds_, "cannot extend dataset " + pathOf(ds_));
  Id fspace(H5Dget_space(ds_));
  const hsize_t start[1] = {size_};
  const hsize_t cnt[1] = {n};
  H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, cnt, nullptr);
  Id mspace(H5Screate_simple(1, cnt, nullptr));
  if (H5Dwrite(ds_, memType_, mspace, fspace, H5P_DEFAULT, data) < 0)
    fail(ds_, "cannot write dataset " + pathOf(ds_));
  size_ += n;
}

Id create2D(hid_t loc, std::string_view name, hid_t fileType, size_t rows, size_t cols,
            const Layout& layout, const void* fill, hid_t fillType) {
  const hsize_t dims[2] = {rows, cols};
  Id space(H5Screate_simple(2, dims, nullptr));
  Id dcpl;
  if (rows > 0 && cols > 0) {
    // Chunks span a few rows so that a heatmap (all GPUs, a column range) and a single track (one
    // row, a column range) both read few chunks.
    const hsize_t chunkCols = std::min<hsize_t>(cols, 4096);
    const hsize_t chunkRows =
        std::min<hsize_t>(rows, std::max<hsize_t>(1, layout.chunk / chunkCols));
    const hsize_t chunk[2] = {chunkRows, chunkCols};
    dcpl = datasetCreateProps(layout.chunk, layout, 2, chunk);
  } else {
    dcpl = Id(H5Pcreate(H5P_DATASET_CREATE));
  }
  if (fill) H5Pset_fill_value(dcpl, fillType, fill);
  Id d(H5Dcreate2(loc, std::string(name).c_str(), fileType, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
  if (!d.valid()) fail(loc, fmt::format("cannot create dataset {}", joinPath(loc, name)));
  return d;
}

void writeRow(hid_t dset, hid_t memType, size_t row, const void* data, size_t cols) {
  if (cols == 0) return;
  Id fspace(H5Dget_space(dset));
  const hsize_t start[2] = {row, 0};
  const hsize_t cnt[2] = {1, cols};
  H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, cnt, nullptr);
  Id mspace(H5Screate_simple(2, cnt, nullptr));
  if (H5Dwrite(dset, memType, mspace, fspace, H5P_DEFAULT, data) < 0)
    fail(dset, "cannot write dataset " + pathOf(dset));
}

void readBlock(hid_t dset, hid_t memType, void* out, size_t row0, size_t nrows, size_t col0,
               size_t ncols) {
  silenceThisThread();
  const auto shape = shapeOf(dset);
  if (shape.size() != 2)
    fail(dset, fmt::format("dataset {} has {} dimensions, expected 2", pathOf(dset), shape.size()));
  if (row0 + nrows > shape[0] || col0 + ncols > shape[1])
    fail(dset, fmt::format("dataset {} is {}x{}, expected at least {}x{}", pathOf(dset), shape[0],
                           shape[1], row0 + nrows, col0 + ncols));
  if (nrows == 0 || ncols == 0) return;
  Id fspace(H5Dget_space(dset));
  const hsize_t start[2] = {row0, col0};
  const hsize_t cnt[2] = {nrows, ncols};
  H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, nullptr, cnt, nullptr);
  Id mspace(H5Screate_simple(2, cnt, nullptr));
  if (H5Dread(dset, memType, mspace, fspace, H5P_DEFAULT, out) < 0)
    fail(dset, fmt::format("cannot read dataset {}, the file may be damaged", pathOf(dset)));
}

RowAppender::RowAppender(hid_t loc, std::string_view name, hid_t fileType, size_t cols,
                         const Layout& layout)
    : cols_(cols) {
  const hsize_t dims[2] = {0, cols};
  const hsize_t maxDims[2] = {H5S_UNLIMITED, cols};
  Id space(H5Screate_simple(2, dims, maxDims));
  const hsize_t chunkCols = std::max<hsize_t>(1, std::min<hsize_t>(cols, 4096));
  const hsize_t chunkRows = std::max<hsize_t>(1, std::min<hsize_t>(64, layout.chunk / chunkCols));
  const hsize_t chunk[2] = {chunkRows, chunkCols};
  Id dcpl = datasetCreateProps(layout.chunk, layout, 2, chunk);
  // Rows are appended one at a time and a chunk spans chunkRows rows: the write cache must hold
  // one band of chunks (all chunks of a row), or every append re-inflates and re-deflates the
  // chunks it touches. HDF5's default (1 MiB) is smaller than a band of a 65,536-bucket level.
  const size_t band = static_cast<size_t>(chunkRows) * cols * H5Tget_size(fileType);
  Id dapl(H5Pcreate(H5P_DATASET_ACCESS));
  H5Pset_chunk_cache(dapl, kReadCacheSlots,
                     std::clamp<size_t>(band + band / 4, 1u << 20, 64u << 20), 1.0);
  ds_ = Id(H5Dcreate2(loc, std::string(name).c_str(), fileType, space, H5P_DEFAULT, dcpl, dapl));
  if (!ds_.valid()) fail(loc, fmt::format("cannot create dataset {}", joinPath(loc, name)));
}

void RowAppender::append(hid_t memType, const void* row) {
  const hsize_t newSize[2] = {rows_ + 1, cols_};
  if (H5Dset_extent(ds_, newSize) < 0) fail(ds_, "cannot extend dataset " + pathOf(ds_));
  writeRow(ds_, memType, rows_, row, cols_);
  ++rows_;
}

}  // namespace wl::h5
