// The Deck's own functions, and reading a deck: parse_deck (one process),
// read_deck (rank 0 reads the file, every rank parses the same text).
#include "isostencil/deck/deck.hpp"

#include "parser.hpp"
#include "text.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sys/stat.h>
#include <iterator>

namespace isostencil::deck {

const DeckValue& Deck::Kernel::parameter(const std::string& key) const {
  const auto found = parameters.find(key);
  if (found == parameters.end())
    throw iso::Error("kernel \"" + name + "\" has no parameter kernel." + key);
  return found->second;
}

std::string DeckLocation::describe(const std::string& dotted_key) const {
  if (origin == "--set") return "--set " + dotted_key;
  if (origin == "default" || file.empty()) return "default " + dotted_key;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

core::Stencil Deck::make_stencil() const {
  const int dims = grid.dims;
  core::Stencil result;
  if (this->stencil.shape == "star")
    result = core::Stencil::star(dims, this->stencil.radius);
  else if (this->stencil.shape == "box")
    result = core::Stencil::box(dims, this->stencil.radius);
  else if (this->stencil.shape == "upwind")
    result = core::Stencil::upwind(dims, this->stencil.radius, this->stencil.signs);
  else {
    std::vector<int> flat;
    for (const std::vector<int>& offset : this->stencil.offsets)
      flat.insert(flat.end(), offset.begin(), offset.end());
    result = core::Stencil(iso::OffsetList(dims, flat), {}, "offsets");
  }
  if (!this->stencil.weights.empty() &&
      static_cast<int>(this->stencil.weights.size()) == result.size())
    result = result.with_weights(this->stencil.weights);
  return result;
}

iso::Algorithm Deck::algorithm() const { return iso::parse_algorithm(halo.algorithm); }

DeckLocation Deck::where(const std::string& dotted_key) const {
  const auto found = locations.find(dotted_key);
  return found != locations.end() ? found->second : DeckLocation{"", 0, 0, "default"};
}

void Deck::fail(const std::string& dotted_key, const std::string& message) const {
  throw DeckError(where(dotted_key).describe(dotted_key) + ": error: " + message);
}

std::string Deck::resolve(const std::string& path) const {
  if (path.empty() || path.front() == '/' || base_dir.empty() || base_dir == ".") return path;
  return base_dir + "/" + path;
}

std::string Deck::output_path(const std::string& suffix) const {
  return output.dir + "/" + output.name + suffix;
}

Deck parse_deck(const std::string& text, const std::string& source,
                const std::vector<std::string>& overrides, const std::string& base_dir) {
  return detail::DeckParser(text, source, overrides, base_dir).parse();
}

Deck deck_from_text(const std::string& text, const std::string& source,
                    const std::vector<std::string>& overrides, const std::string& base_dir) {
  return parse_deck(text, source, overrides, base_dir);
}

Deck read_deck(MPI_Comm comm, const std::string& path, const std::vector<std::string>& overrides) {
  int rank = 0;
  ISO_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  // Rank 0 reads; the text (or the error) travels as one string with a flag.
  std::string payload;
  int ok = 1;
  if (rank == 0) {
    if (path.empty()) {
      payload = builtin_default_deck();
    } else {
      // Every failure becomes the message all ranks throw: rank 0 must reach
      // the broadcast below whatever the path is.
      struct stat info {};
      if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
        ok = 0;
        payload = path + ": error: is a directory, not a deck; give the deck file (e.g. " + path +
                  (path.empty() || path.back() == '/' ? "" : "/") + "jacobi.toml)";
      } else {
        try {
          std::ifstream in(path, std::ios::binary);
          if (!in) {
            ok = 0;
            payload = path + ": error: cannot read the deck: " + std::strerror(errno);
          } else {
            payload.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
            if (in.bad()) {
              ok = 0;
              payload = path + ": error: reading the deck failed";
            }
          }
        } catch (const std::exception& error) {
          ok = 0;
          payload = path + ": error: reading the deck failed: " + error.what();
        }
      }
    }
  }
  long header[2] = {ok, static_cast<long>(payload.size())};
  ISO_MPI_CHECK(MPI_Bcast(header, 2, MPI_LONG, 0, comm));
  payload.resize(static_cast<std::size_t>(header[1]));
  if (header[1] > 0)
    ISO_MPI_CHECK(MPI_Bcast(payload.data(), static_cast<int>(header[1]), MPI_CHAR, 0, comm));
  if (header[0] == 0) throw DeckError(payload);
  if (path.empty()) return parse_deck(payload, "<built-in default>", overrides, ".");
  return parse_deck(payload, path, overrides, detail::directory_of(path));
}

}  // namespace isostencil::deck
