// paes: parallel AES for bulk data. main() wires the subcommands and turns
// every failure into one line on stderr and an exit status: 0 success,
// 1 a failed operation, 2 a usage error.
#include <cstdio>
#include <iostream>
#include <new>

#include <cstring>
#include <memory>
#include <string_view>

#include "cli/commands.hpp"
#include "paes/error.hpp"
#include "util/core_dumps.hpp"
#ifdef PAES_HAVE_MPI
#include "paes/mpi.hpp"
#endif

namespace {

constexpr const char* kFooter = R"(Examples:
  paes encrypt --mode ctr --key-file aes.key --iv 000102030405060708090a0b0c0d0e0f data.bin -o data.ctr
  paes decrypt --mode ctr --key-file aes.key --iv 000102030405060708090a0b0c0d0e0f data.ctr -o data.bin
  paes encrypt --mode cbc --key-file aes.key --iv "$IV" --threads 4 backup.tar -o backup.tar.cbc
  paes info
  paes bench --size 256M --modes ctr,cbc

Every raw mode gives exactly the bytes of
  openssl enc [-d] -aes-<bits>-<mode> -K <key hex> -iv <iv hex> [-nopad]
whatever the engine, thread count or chunk size.

Exit status: 0 success, 1 a failed operation (bad input data, I/O error,
bad decrypt), 2 a usage error. Errors are one line on stderr.
Run 'paes <command> --help' for each command's options.)";

int fail(const std::string& message, int status) {
  std::fflush(stdout);
  std::cerr << "paes: " << message << '\n';
  return status;
}

// Whether the command line asks for --engine mpi. Checked before parsing,
// because every rank must initialise MPI before anything else.
bool mpi_requested(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--engine=mpi" || (arg == "--engine" && i + 1 < argc && std::strcmp(argv[i + 1], "mpi") == 0)) {
      return true;
    }
  }
  return false;
}

int run_command_line(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  // First, before any rank or command holds a key (util/core_dumps.hpp).
  paes::forbid_core_dumps();
#ifdef PAES_HAVE_MPI
  // Under --engine mpi, rank 0 runs the command line and hands the job to the
  // other ranks, which only serve (see engine/mpi_engine.cpp).
  std::unique_ptr<paes::MpiSession> session;
  if (mpi_requested(argc, argv)) {
    session = std::make_unique<paes::MpiSession>(&argc, &argv);
    if (session->rank() != 0) return session->serve();
  }
  const int status = run_command_line(argc, argv);
  if (session) session->finish(status);
  return status;
#else
  return run_command_line(argc, argv);
#endif
}

namespace {

int run_command_line(int argc, char** argv) {
  CLI::App app{"paes: parallel AES for bulk data, byte-identical to openssl enc", "paes"};
  app.footer(kFooter);
  app.require_subcommand(1);
  app.set_version_flag("--version", "paes 0.1.0");

  paes::cli::TransformArgs encrypt_args, decrypt_args;
  paes::cli::BenchArgs bench_args;
  paes::cli::InfoArgs info_args;
  paes::cli::KeygenArgs keygen_args;
  CLI::App* encrypt = add_transform_command(app, paes::Direction::encrypt, encrypt_args);
  CLI::App* decrypt = add_transform_command(app, paes::Direction::decrypt, decrypt_args);
  CLI::App* bench = add_bench_command(app, bench_args);
  CLI::App* info = add_info_command(app, info_args);
  CLI::App* keygen = add_keygen_command(app, keygen_args);

  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::Success& e) {  // --help, --version
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      std::string message = e.what();
      for (CLI::App* sub : app.get_subcommands()) {
        message += " (see 'paes " + sub->get_name() + " --help')";
      }
      if (app.get_subcommands().empty()) message += " (see 'paes --help')";
      return fail(message, 2);
    }
    if (encrypt->parsed()) return run_transform(paes::Direction::encrypt, encrypt_args, *encrypt);
    if (decrypt->parsed()) return run_transform(paes::Direction::decrypt, decrypt_args, *decrypt);
    if (bench->parsed()) return run_bench(bench_args);
    if (info->parsed()) return run_info(info_args);
    if (keygen->parsed()) return run_keygen(keygen_args);
    return fail("no command given (see 'paes --help')", 2);
  } catch (const paes::Error& e) {
    return fail(e.what(), e.kind() == paes::ErrorKind::usage ? 2 : 1);
  } catch (const std::bad_alloc&) {
    return fail("out of memory", 1);
  } catch (const std::exception& e) {
    return fail(e.what(), 1);
  }
}

}  // namespace
