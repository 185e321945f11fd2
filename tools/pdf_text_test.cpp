#include "tools/pdf_text.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "common/utf8.h"

namespace warden::tools {
namespace {

using namespace std::chrono_literals;

/// A minimal valid PDF: one page per entry of `pages`, each showing its text (a PDF string
/// literal's content, so "(", ")" and "\" must be escaped by the caller) in Helvetica with
/// WinAnsiEncoding (or `font`, object 3); `trailer_extra` goes into the trailer dictionary and `extra_objects` are
/// appended as objects numbered after the pages'. The xref offsets are computed.
std::string make_pdf(const std::vector<std::string>& pages, const std::string& trailer_extra = "",
                     const std::vector<std::string>& extra_objects = {},
                     const std::string& font = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica "
                                               "/Encoding /WinAnsiEncoding >>") {
  // 1 catalog, 2 pages, 3 font, then per page: the page and its content stream.
  std::vector<std::string> objects = {
      "<< /Type /Catalog /Pages 2 0 R >>",
      "",  // the page tree, once the kids are known
      font,
  };
  std::string kids;
  for (const std::string& text : pages) {
    const std::size_t page_no = objects.size() + 1;
    kids += std::to_string(page_no) + " 0 R ";
    const std::string content = "BT /F1 12 Tf 40 700 Td (" + text + ") Tj ET";
    objects.push_back("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                      "/Contents " + std::to_string(page_no + 1) + " 0 R >>");
    objects.push_back("<< /Length " + std::to_string(content.size()) + " >>\nstream\n" + content + "\nendstream");
  }
  objects[1] = "<< /Type /Pages /Kids [" + kids + "] /Count " + std::to_string(pages.size()) + " >>";
  for (const std::string& o : extra_objects) objects.push_back(o);

  std::string pdf = "%PDF-1.4\n%\xE2\xE3\xCF\xD3\n";
  std::string xref = "xref\n0 " + std::to_string(objects.size() + 1) + "\n0000000000 65535 f \n";
  for (std::size_t i = 0; i < objects.size(); ++i) {
    char entry[32];
    std::snprintf(entry, sizeof entry, "%010zu 00000 n \n", pdf.size());
    xref += entry;
    pdf += std::to_string(i + 1) + " 0 obj\n" + objects[i] + "\nendobj\n";
  }
  const std::size_t xref_at = pdf.size();
  pdf += xref + "trailer\n<< /Size " + std::to_string(objects.size() + 1) + " /Root 1 0 R " + trailer_extra +
         " >>\nstartxref\n" + std::to_string(xref_at) + "\n%%EOF\n";
  return pdf;
}

/// No child of this process is left (running or zombie).
void expect_no_children() {
  errno = 0;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(PdfText, ExtractsText) {
  auto r = pdf_to_text(make_pdf({"Hello from a PDF"}), 10, 1 << 20, 10s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "Hello from a PDF");
  expect_no_children();
}

TEST(PdfText, NonAsciiComesBackAsUtf8) {
  // WinAnsi \351 is é, \200 is €.
  auto r = pdf_to_text(make_pdf({"caf\\351 \\200 5"}), 10, 1 << 20, 10s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, "caf\xC3\xA9 \xE2\x82\xAC 5");
}

TEST(PdfText, PagesAreSeparatedAndCapped) {
  const std::string pdf = make_pdf({"page one", "page two", "page three"});
  auto all = pdf_to_text(pdf, 10, 1 << 20, 10s);
  ASSERT_TRUE(all.ok()) << all.error().message;
  EXPECT_EQ(*all, "page one\n\npage two\n\npage three");
  auto two = pdf_to_text(pdf, 2, 1 << 20, 10s);
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ(*two, "page one\n\npage two");
  auto none = pdf_to_text(pdf, 0, 1 << 20, 10s);  // below 1 counts as 1
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ(*none, "page one");
}

TEST(PdfText, MaxBytesIsRespectedOnUtf8Boundary) {
  const std::string pdf = make_pdf({"\\351\\351\\351\\351\\351\\351", "second page"});
  for (std::size_t cap : {0, 1, 2, 3, 5, 11, 13}) {
    auto r = pdf_to_text(pdf, 10, cap, 10s);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_LE(r->size(), cap);
    EXPECT_GE(r->size() + 1, std::min<std::size_t>(cap, 16)) << cap;  // é is 2 bytes: at most 1 lost
    EXPECT_TRUE(is_valid_utf8(*r)) << cap;
  }
  auto r = pdf_to_text(pdf, 10, 15, 10s);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\n\ns");
  expect_no_children();
}

TEST(PdfText, NotAPdfIsAnError) {
  for (std::string_view bytes : {std::string_view("just some text"), std::string_view(""),
                                 std::string_view("<html><body>%PDF</body></html>")}) {
    auto r = pdf_to_text(bytes, 10, 1000, 10s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "not a PDF");
    EXPECT_EQ(r.error().type_code, "not_pdf");
    EXPECT_EQ(r.error().code, errc::invalid_request);
  }
}

TEST(PdfText, GarbageAfterTheHeaderIsUnreadable) {
  auto r = pdf_to_text("%PDF-1.7\n\x01\x02 this is not a document at all \xFF\xFE", 10, 1000, 10s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "PDF could not be read");
  EXPECT_EQ(r.error().type_code, "pdf_unreadable");
  expect_no_children();
}

TEST(PdfText, TruncatedPdfDoesNotCrash) {
  const std::string pdf = make_pdf({"first page text", "second page text"});
  for (std::size_t keep : {pdf.size() / 4, pdf.size() / 2, pdf.size() - 40, pdf.size() - 5}) {
    auto r = pdf_to_text(std::string_view(pdf).substr(0, keep), 10, 1000, 10s);
    // poppler may rebuild the cross-reference table and read what is there, or give up.
    if (r.ok()) {
      EXPECT_TRUE(is_valid_utf8(*r));
    } else {
      EXPECT_EQ(r.error().type_code, "pdf_unreadable") << keep;
    }
  }
  expect_no_children();
}

TEST(PdfText, EncryptedPdfIsAnError) {
  // The standard security handler, revision 2, with a /U that no password (not even the empty
  // one) matches: poppler needs a password.
  const std::string hex32(64, 'A');
  const std::string pdf =
      make_pdf({"secret"}, "/Encrypt 6 0 R /ID [<0123456789ABCDEF0123456789ABCDEF> <0123456789ABCDEF0123456789ABCDEF>]",
               {"<< /Filter /Standard /V 1 /R 2 /O <" + hex32 + "> /U <" + hex32 + "> /P -4 >>"});
  auto r = pdf_to_text(pdf, 10, 1000, 10s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type_code, "pdf_encrypted");
  EXPECT_EQ(r.error().message, "PDF is encrypted (a password is needed to read it)");
  expect_no_children();
}

TEST(PdfText, MissingCMapFileIsNotFatal) {
  // A Japanese CMap that poppler reads from poppler-data's files: the sandbox refuses the open
  // (EACCES, not a kill), and poppler goes on without it.
  const std::string pdf = make_pdf({"\\202\\240\\202\\242"}, "", {"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /Foo "
                                   "/CIDSystemInfo << /Registry (Adobe) /Ordering (Japan1) /Supplement 2 >> >>"},
                                  "<< /Type /Font /Subtype /Type0 /BaseFont /Foo /Encoding /90ms-RKSJ-H "
                                  "/DescendantFonts [6 0 R] >>");
  auto r = pdf_to_text(pdf, 10, 1000, 10s);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(is_valid_utf8(*r));
}

TEST(PdfText, TimeoutKillsTheChild) {
  std::vector<std::string> pages(3000, "a page of text that takes a while in total");
  const std::string pdf = make_pdf(pages);
  const auto start = std::chrono::steady_clock::now();
  auto r = pdf_to_text(pdf, 3000, 1 << 24, 1ms);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type_code, "pdf_timeout");
  EXPECT_EQ(r.error().message, "PDF text extraction timed out after 0.001 s");
  EXPECT_LT(took, 60s);  // killed, not left to run through 3000 pages (a hang bound, not a speed target)
  expect_no_children();
}

TEST(PdfText, ManyThreadsAtOnce) {
  const std::string pdf = make_pdf({"concurrent text", "page 2"});
  std::vector<std::thread> threads;
  std::vector<std::vector<std::string>> got(8);
  for (std::size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] {
      for (int round = 0; round < 3; ++round) {
        auto r = pdf_to_text(pdf, 10, 1000, 60s);  // a bound for a loaded machine, not a speed target
        got[i].push_back(r.ok() ? *r : r.error().type_code);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& results : got) {
    for (const std::string& g : results) {
      EXPECT_EQ(g, "concurrent text\n\npage 2");
    }
  }
  expect_no_children();
}

}  // namespace
}  // namespace warden::tools
