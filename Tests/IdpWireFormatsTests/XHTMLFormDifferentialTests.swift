import IdpPrimitives
import IdpWireFormats
import Testing
import TestSupport

/// The fast parser against the straightforward one it replaced (``ReferenceXHTMLFormParser``): the
/// same form or the same error, and the same error notice, for every page.
@Suite("XHTMLForm, against the reference parser")
struct XHTMLFormDifferentialTests {
    static let pages = [
        XHTMLFormTests.loginPage,
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE html>
        <html xmlns="http://www.w3.org/1999/xhtml">
        <head><title>KssIdpLogin – step 1 of 1</title></head>
        <body>
        <form id="kc-form" action="/auth/realms/idp-bench/login-actions/authenticate?session_code=AbC-_0&amp;execution=1" method="post">
        <label for="username">Username</label><input id="username" name="username" type="text" autocomplete="off"/>
        <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="off"/>
        <input type="hidden" name="session_code" value="AbC-_0"/>
        <input id="kc-submit" name="submit" type="submit" value="Continue"/>
        </form>
        </body>
        </html>
        """,
        #"""
        <HTML><HEAD><TITLE> A &lt;b&gt; &#x1F600; &#233; </TITLE></HEAD><BODY>
        <!-- <form action="/commented"> -->
        <DIV ID='kc-error-message' DATA-ERROR="x&amp;y"><div>nested <![CDATA[<raw &amp;>]]></div>  tail
        </DIV>
        <Form Action=/go Method=Get><FORM action="/inner"><Input Id=a Type=HIDDEN value=v&quot;w>
        <LABEL FOR=a><label for="a">inner</label> outer</LABEL><label for="b"></label><label for="b">B</label>
        <input name="b" disabled><br><img src="x"/><hr/><?pi stuff?></form></Form>
        <input id="after"/></BODY></HTML>
        """#,
        #"<form action="/a"><input id="x" name="y" type="Text" value=""/><input name="z" value/><textarea>t</textarea></form>"#,
        #"<p id="kc-error-message">only an error page &amp; no form</p>"#,
    ]

    static let fragments = [
        "<", ">", "/", "=", "\"", "'", "&", ";", "#x41", "&#65;", "&amp;", "&lt;", "&bogus;", "!--", "-->", "<!", "?", " ", "\n", "\t",
        "form", "FORM", "input", "label", "for", "id", "name", "type", "value", "action", "method", "</form>", "<form action=\"/a\">",
        "<input id=\"", "kc-error-message", "data-error", "title", "<title>", "</title>", "a", "é", "\u{0}", "]]>", "<![CDATA[",
        "<label for=\"a\">", "</label>", "<div id=\"kc-error-message\">", "</div>", "<br/>", "<input id=a>", "<?x?>", "<!DOCTYPE x>",
    ]

    /// Pages in each random corpus: 6,000 where the full suite is asked for (``SuiteSize``), 2,000
    /// otherwise. Every page of a corpus is the seeded generator's, so a corpus is the first
    /// pages of the full one.
    static let corpusSize = SuiteSize.pick(2_000, full: 6_000)

    static func expectSame(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let difference = Self.difference(text)
        #expect(difference == nil, "\(difference ?? "")", sourceLocation: sourceLocation)
    }

    /// How the two parsers read `text` differently, or `nil` when they read it alike.
    static func difference(_ text: String) -> String? {
        let new = Result { () throws(XHTMLFormError) in try XHTMLForm.parse(text) }
        let old = Result { () throws(XHTMLFormError) in try ReferenceXHTMLFormParser.parse(text) }
        if new != old { return "page: \(text.debugDescription)" }
        // The same page as an HTTP body's bytes: read in place when ASCII, as text otherwise.
        switch (Result { () throws(XHTMLFormError) in try XHTMLForm.parse(body: Array(text.utf8)) }, new) {
        case (.success(let form?), .success(let expected)) where form == expected: break
        case (.failure(let error), .failure(let expected)) where error == expected: break
        default: return "bytes of page: \(text.debugDescription)"
        }
        let newNotice = XHTMLForm.errorNotice(in: text), oldNotice = ReferenceXHTMLFormParser.errorNotice(in: text)
        if newNotice?.code != oldNotice?.code || newNotice?.message != oldNotice?.message { return "notice of page: \(text.debugDescription)" }
        return nil
    }

    /// The differences over `pages`, computed on an OS thread (thousands of pages keep a thread busy for seconds).
    static func differences(_ pages: @escaping @Sendable () -> [String]) async -> [String] {
        await OSThreads.run { pages().compactMap(difference) }
    }

    @Test("the sample pages and every prefix of them read alike")
    func samplesAndPrefixes() async {
        let differences = await Self.differences {
            Self.pages.flatMap { page in
                let bytes = Array(page.utf8)
                return [page] + (0..<bytes.count).map { String(decoding: bytes[..<$0], as: UTF8.self) }
            }
        }
        #expect(differences.isEmpty, "\(differences.prefix(5))")
    }

    @Test("pages with bytes deleted, inserted or replaced read alike")
    func mutations() async {
        let differences = await Self.differences {
            var generator = SeededRandom(seed: 12)
            let alphabet = Array("<>/=\"'&;# \n!-?[]abcdefinoprstuxADFIT0189é".utf8)
            return (0..<Self.corpusSize).map { round in
                var bytes = Array(Self.pages[round % Self.pages.count].utf8)
                for _ in 0..<(1 + generator.below(4)) {
                    let index = generator.below(bytes.count + 1)
                    let byte = alphabet[generator.below(alphabet.count)]
                    switch generator.below(3) {
                    case 0 where index < bytes.count: bytes.remove(at: index)
                    case 1 where index < bytes.count: bytes[index] = byte
                    default: bytes.insert(byte, at: index)
                    }
                }
                return String(decoding: bytes, as: UTF8.self)
            }
        }
        #expect(differences.isEmpty, "\(differences.prefix(5))")
    }

    @Test("fragment soup and random bytes read alike")
    func soup() async {
        let differences = await Self.differences {
            var generator = SeededRandom(seed: 1212)
            let fragments = Self.fragments
            return (0..<Self.corpusSize).map { round in
                switch round % 3 {
                case 0: return generator.randomBytesText(upTo: 200)
                case 1: return "<form action=\"/a\">" + generator.soup(of: fragments, upTo: 60) + "</form>"
                default: return generator.soup(of: fragments, upTo: 60)
                }
            }
        }
        #expect(differences.isEmpty, "\(differences.prefix(5))")
    }

    @Test("many inputs and labels (the indexed paths) read alike")
    func manyInputs() {
        for count in [15, 16, 17, 40] {
            var page = #"<form action="/a">"#
            for index in 0..<count {
                page += #"<label for="f\#(index % 20)">L\#(index)</label><input id="f\#(index)" type="TEXT"/>"#
            }
            page += "</form>"
            Self.expectSame(page)
            Self.expectSame(page.replacingOccurrences(of: #"id="f\#(count - 1)""#, with: #"id="f0""#))
        }
    }
}

@Suite("XHTMLForm edge cases")
struct XHTMLFormEdgeCaseTests {
    @Test("a body that is not UTF-8 reads as nil; one beyond the size limit is refused")
    func bodies() throws {
        var bytes = Array(#"<form action="/a"><input id="é"/></form>"#.utf8)
        #expect(try XHTMLForm.parse(body: bytes)?.inputs.map(\.id) == ["é"])
        bytes[bytes.firstIndex(of: 0xA9)!] = 0x28
        #expect(try XHTMLForm.parse(body: bytes) == nil)
        let large = [UInt8](repeating: UInt8(ascii: " "), count: XHTMLForm.maximumSize + 1)
        #expect(throws: XHTMLFormError(.tooLarge(XHTMLForm.maximumSize + 1))) { try XHTMLForm.parse(body: large) }
    }

    @Test("entities in attribute values and text decode once, in both quote styles")
    func entities() throws {
        let form = try XHTMLForm.parse(#"<title>a&amp;amp;b &#x3C;&#62;</title><form action='/x?a=1&amp;b=&quot;2&quot;'><input id="i" value='&apos;q&apos;'/></form>"#)
        #expect(form.title == "a&amp;b <>")
        #expect(form.action == #"/x?a=1&b="2""#)
        #expect(form.inputs.first?.value == "'q'")
    }

    @Test("a quote of the other kind inside a value is text")
    func quoting() throws {
        let form = try XHTMLForm.parse(#"<form action="/x"><input id="a" value="it's"/><input id='b' value='say "hi"'/></form>"#)
        #expect(form.inputs.map(\.value) == ["it's", #"say "hi""#])
    }

    @Test("malformed input gives a clear error")
    func malformed() {
        #expect(throws: XHTMLFormError(.malformedTag(offset: 18))) { try XHTMLForm.parse(#"<form action="/x"><input id="a/></form>"#) }
        #expect(throws: XHTMLFormError(.invalidEntity("&amp"))) { try XHTMLForm.parse(#"<form action="/x?a&amp"></form>"#) }
        #expect(throws: XHTMLFormError(.invalidEntity("&#0;"))) { try XHTMLForm.parse(#"<form action="/x">&#0;</form>"#) }
        #expect(throws: XHTMLFormError(.malformedTag(offset: 0))) { try XHTMLForm.parse("<![CDATA[ never closed") }
        #expect(throws: XHTMLFormError(.duplicateInputId("a"))) { try XHTMLForm.parse(#"<form action="/x"><input id="a"/><input name="a"/></form>"#) }
    }
}
