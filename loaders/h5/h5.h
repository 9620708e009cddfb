// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// A thin RAII layer over the HDF5 C API: handles that close themselves, attributes, 1-D and 2-D
// chunked datasets (shuffle + deflate), variable-length UTF-8 strings, and appendable datasets.
//
// HDF5 serializes every call behind one global lock, so Wattline gives it one owner: every entry
// point of the native-format reader and writer takes h5::lock() first. Failures throw wl::Error
// with the dataset path and HDF5's own innermost message; HDF5's automatic stderr dump is off.
// Files are opened for reading through Wattline's read driver (read_driver.h), which refuses
// damaged blocks HDF5 1.10 would loop on.

#include <hdf5.h>

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace wl::h5 {

// The one lock that serializes Wattline's HDF5 use (recursive: readers call helpers).
std::recursive_mutex& lock();

// Turns HDF5's automatic error printing off for the calling thread.
void silenceErrors();
// The innermost HDF5 error message of the calling thread, or "" if none.
std::string lastError();

// An HDF5 identifier that closes itself (file, group, dataset, dataspace, type, property list,
// attribute).
class Id {
 public:
  Id() = default;
  explicit Id(hid_t id) : id_(id) {}
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  Id(Id&& o) noexcept : id_(o.id_) { o.id_ = H5I_INVALID_HID; }
  Id& operator=(Id&& o) noexcept;
  ~Id() { close(); }

  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }  // NOLINT(google-explicit-constructor)
  bool valid() const { return id_ >= 0; }
  void close();

 private:
  hid_t id_ = H5I_INVALID_HID;
};

template <typename T>
hid_t nativeType() {
  if constexpr (std::is_same_v<T, int8_t>)
    return H5T_NATIVE_INT8;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return H5T_NATIVE_UINT8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return H5T_NATIVE_INT16;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return H5T_NATIVE_UINT16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return H5T_NATIVE_INT32;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return H5T_NATIVE_UINT32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return H5T_NATIVE_INT64;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return H5T_NATIVE_UINT64;
  else if constexpr (std::is_same_v<T, float>)
    return H5T_NATIVE_FLOAT;
  else if constexpr (std::is_same_v<T, double>)
    return H5T_NATIVE_DOUBLE;
  else
    static_assert(sizeof(T) == 0, "unsupported HDF5 element type");
}

// How datasets are laid out on disk.
struct Layout {
  size_t chunk = 32768;  // elements per chunk (1-D), or per chunk row-block (2-D)
  int deflate = 4;       // 0 = no compression, 1..9 = gzip level
  bool shuffle = true;
};

// The object's path inside its file, for messages ("/telemetry/power_w").
std::string pathOf(hid_t loc);
// The file name of the object's file, for messages.
std::string fileOf(hid_t loc);

Id createFile(const std::filesystem::path& path);
// Opens read-only; throws wl::Error naming the file when it is missing or not HDF5.
Id openFile(const std::filesystem::path& path);
// Opens an existing file for writing (`wattline upgrade` on its own copy): new objects in the HDF5
// 1.10 format, as createFile().
Id openFileForUpdate(const std::filesystem::path& path);
Id createGroup(hid_t loc, std::string_view name);
Id openGroup(hid_t loc, std::string_view name);
// Opens a dataset with HDF5's default chunk cache (1 MiB): for its shape, its attributes or a
// read of the whole of it.
Id openDataset(hid_t loc, std::string_view name);
// Opens a dataset that stays open to be read from range by range (a run file's columns and
// pyramid levels), with a chunk cache sized by its chunks (1-32 MiB, see h5.cpp).
Id openDatasetForReading(hid_t loc, std::string_view name);
// True if a link of that (possibly nested) name exists below loc.
bool exists(hid_t loc, std::string_view path);

// Attributes (scalar).
void setAttr(hid_t loc, std::string_view name, int64_t v);
void setAttr(hid_t loc, std::string_view name, double v);
void setAttr(hid_t loc, std::string_view name, std::string_view v);
bool hasAttr(hid_t loc, std::string_view name);
std::optional<int64_t> attrInt(hid_t loc, std::string_view name);
std::optional<double> attrDouble(hid_t loc, std::string_view name);
std::optional<std::string> attrString(hid_t loc, std::string_view name);

// Number of elements along the first dimension, and the rank, of a dataset.
std::vector<hsize_t> shapeOf(hid_t dset);

// Writes a whole 1-D dataset.
void writeRaw(hid_t loc, std::string_view name, hid_t memType, hid_t fileType, const void* data,
              size_t n, const Layout& layout);
template <typename T>
void write(hid_t loc, std::string_view name, std::span<const T> data, const Layout& layout = {}) {
  writeRaw(loc, name, nativeType<T>(), nativeType<T>(), data.data(), data.size(), layout);
}
template <typename T>
void write(hid_t loc, std::string_view name, const std::vector<T>& data,
           const Layout& layout = {}) {
  write<T>(loc, name, std::span<const T>(data), layout);
}

// Reads [offset, offset + count) of a 1-D dataset converted to T; count = npos reads to the end.
inline constexpr size_t kAll = static_cast<size_t>(-1);
void readRaw(hid_t dset, hid_t memType, void* out, size_t offset, size_t count);
template <typename T>
std::vector<T> read(hid_t dset, size_t offset = 0, size_t count = kAll) {
  const auto shape = shapeOf(dset);
  const size_t n = shape.empty() ? 0 : static_cast<size_t>(shape[0]);
  if (count == kAll) count = offset <= n ? n - offset : 0;
  std::vector<T> out(count);
  readRaw(dset, nativeType<T>(), out.data(), offset, count);
  return out;
}
template <typename T>
std::vector<T> read(hid_t loc, std::string_view name, size_t offset = 0, size_t count = kAll) {
  Id ds = openDataset(loc, name);
  return read<T>(ds.get(), offset, count);
}

// Variable-length UTF-8 string datasets.
void writeStrings(hid_t loc, std::string_view name, const std::vector<std::string>& strings,
                  const Layout& layout = {});
std::vector<std::string> readStrings(hid_t loc, std::string_view name);

// A 1-D dataset that grows as data is appended (chunked, unlimited).
class Appender {
 public:
  Appender() = default;
  Appender(hid_t loc, std::string_view name, hid_t memType, hid_t fileType, const Layout& layout);
  void append(const void* data, size_t n);
  size_t size() const { return size_; }
  bool valid() const { return ds_.valid(); }

 private:
  Id ds_;
  hid_t memType_ = H5I_INVALID_HID;
  size_t size_ = 0;
};

template <typename T>
Appender makeAppender(hid_t loc, std::string_view name, const Layout& layout = {}) {
  return Appender(loc, name, nativeType<T>(), nativeType<T>(), layout);
}

// 2-D datasets [rows][cols] written row by row and read as blocks.
Id create2D(hid_t loc, std::string_view name, hid_t fileType, size_t rows, size_t cols,
            const Layout& layout, const void* fill, hid_t fillType);
void writeRow(hid_t dset, hid_t memType, size_t row, const void* data, size_t cols);
void readBlock(hid_t dset, hid_t memType, void* out, size_t row0, size_t nrows, size_t col0,
               size_t ncols);

// A 2-D dataset [rows][cols] whose rows are appended one at a time (rows unlimited).
class RowAppender {
 public:
  RowAppender() = default;
  RowAppender(hid_t loc, std::string_view name, hid_t fileType, size_t cols, const Layout& layout);
  void append(hid_t memType, const void* row);
  size_t rows() const { return rows_; }

 private:
  Id ds_;
  size_t cols_ = 0;
  size_t rows_ = 0;
};

}  // namespace wl::h5
