import IdpPrimitives
import IdpWireFormats
import Testing

@Suite("XHTMLForm")
struct XHTMLFormTests {
    static let loginPage = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE html>
        <html xmlns="http://www.w3.org/1999/xhtml">
        <head><title>Sign in to demo</title></head>
        <body>
        <div id="kc-error-message" class="alert alert-error" data-error="invalid_credentials"><span class="kc-feedback-text">Invalid username or password.</span></div>
        <form id="kc-form-login" action="/auth/realms/demo/login-actions/authenticate?session_code=abc&amp;execution=step-1" method="post">
        <label for="username">Username</label><input id="username" name="username" type="text" autocomplete="off"/>
        <label for="password">Password</label><input id="password" name="password" type="password"/>
        <input type="hidden" name="session_code" value="abc"/>
        <input id="kc-login" name="login" type="submit" value="Sign In"/>
        </form></body></html>
        """

    static let loginForm = XHTMLForm(
        title: "Sign in to demo",
        action: "/auth/realms/demo/login-actions/authenticate?session_code=abc&execution=step-1",
        method: "POST",
        inputs: [
            .init(id: "username", name: "username", type: "text", value: nil, label: "Username"),
            .init(id: "password", name: "password", type: "password", value: nil, label: "Password"),
            .init(id: "session_code", name: "session_code", type: "hidden", value: "abc", label: nil),
            .init(id: "kc-login", name: "login", type: "submit", value: "Sign In", label: nil),
        ],
        errorMessage: "Invalid username or password.",
        errorCode: "invalid_credentials"
    )

    /// Asserts that parsing `text` fails for exactly `reason`.
    func expectReason(_ text: String, _ reason: XHTMLFormError.Reason, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(throws: XHTMLFormError(reason), sourceLocation: sourceLocation) {
            try XHTMLForm.parse(text)
        }
    }

    @Test("reads a realistic login page exactly")
    func loginPage() throws {
        let form = try XHTMLForm.parse(Self.loginPage)
        #expect(form == Self.loginForm)
        #expect(form.visibleInputs.map(\.id) == ["username", "password"])
        #expect(form.hiddenInputs.map(\.name) == ["session_code"])
        #expect(form.hiddenInputs.map(\.value) == ["abc"])
        #expect(form.action == "/auth/realms/demo/login-actions/authenticate?session_code=abc&execution=step-1")
        #expect(form.inputs.map(\.label) == ["Username", "Password", nil, nil])
        #expect(form.errorMessage == "Invalid username or password.")
        #expect(form.errorCode == "invalid_credentials")
    }

    @Test("accepts upper case, single quotes, unquoted and valueless attributes, unclosed inputs and entities")
    func forgivingSyntax() throws {
        let page = """
            <FORM Method='Post' ACTION='/login?a=1&amp;b=&#x32;&#51;'>
              <LABEL FOR='user'>  User <b>name</b> &amp; e-mail </LABEL>
              <INPUT NAME='user' TYPE='EMAIL' VALUE='a&lt;b&gt;&quot;c&apos;'>
              <input id=otp disabled>
              <input
                 value = "on"   type="checkbox"
                 name="remember"></input>
            </FORM >
            """
        let form = try XHTMLForm.parse(page)
        #expect(form == XHTMLForm(
            title: nil,
            action: "/login?a=1&b=23",
            method: "POST",
            inputs: [
                .init(id: "user", name: "user", type: "email", value: #"a<b>"c'"#, label: "User name & e-mail"),
                .init(id: "otp", name: "otp", type: "text", value: nil, label: nil),
                .init(id: "remember", name: "remember", type: "checkbox", value: "on", label: nil),
            ]
        ))
    }

    @Test("takes only the first form and only the inputs inside it")
    func firstFormOnly() throws {
        let page = """
            <input id="outside"/>
            <form action="/first"><input id="a"/></form>
            <input id="between"/>
            <form action="/second" method="post"><input id="b"/></form>
            """
        let form = try XHTMLForm.parse(page)
        #expect(form.action == "/first")
        #expect(form.method == "GET")
        #expect(form.inputs.map(\.id) == ["a"])
    }

    @Test("skips comments, tags inside them included, and reads CDATA as text")
    func commentsAndCData() throws {
        let page = """
            <title><![CDATA[A & B <i>]]></title>
            <!-- <form action="/ghost"> -->
            <form action="/real"><!-- <input id="ghost"/> <div id="kc-error-message">x</div> --><input id="real"/></form>
            """
        let form = try XHTMLForm.parse(page)
        #expect(form.title == "A & B <i>")
        #expect(form.action == "/real")
        #expect(form.inputs.map(\.id) == ["real"])
        #expect(form.errorMessage == nil)
        #expect(form.errorCode == nil)
    }

    @Test("collapses whitespace in the error message and matches nested same-name elements")
    func errorMessage() throws {
        let page = """
            <div id="kc-error-message"><div>Account
               is</div>   <div><strong>locked</strong>&#46;</div></div><div>not part of it</div>
            <form action="/a"></form>
            """
        let form = try XHTMLForm.parse(page)
        #expect(form.errorMessage == "Account is locked.")
        #expect(form.errorCode == nil)
    }

    @Test("an empty error element gives a code but no message")
    func emptyErrorElement() throws {
        let form = try XHTMLForm.parse(#"<span id="kc-error-message" data-error="expired"/><form action="/a"></form>"#)
        #expect(form.errorMessage == nil)
        #expect(form.errorCode == "expired")
    }

    @Test("separates visible from hidden and button-like inputs")
    func inputKinds() throws {
        let page = """
            <form action="/a"><input id="t"/><input id="h" type="HIDDEN"/><input id="s" type="submit"/>
            <input id="b" type="button"/><input id="r" type="reset"/><input id="i" type="image"/>
            <input id="c" type="checkbox"/><input id="p" type="password"/></form>
            """
        let form = try XHTMLForm.parse(page)
        #expect(form.visibleInputs.map(\.id) == ["t", "c", "p"])
        #expect(form.hiddenInputs.map(\.id) == ["h"])
        #expect(form.inputs.map(\.type) == ["text", "hidden", "submit", "button", "reset", "image", "checkbox", "password"])
    }

    @Test("labels match by id from anywhere in the page, the first one winning")
    func labels() throws {
        let page = """
            <label for="pin">PIN <em>code</em></label>
            <form action="/a"><label for="pin">Second label</label><label for="nobody">Unused</label>
            <input name="pin" type="password"/><label for="otp">   </label><input id="otp"/></form>
            """
        let form = try XHTMLForm.parse(page)
        #expect(form.inputs == [
            .init(id: "pin", name: "pin", type: "password", value: nil, label: "PIN code"),
            .init(id: "otp", name: "otp", type: "text", value: nil, label: nil),
        ])
    }

    @Test("refuses a page over the size limit")
    func tooLarge() {
        expectReason(String(repeating: "a", count: XHTMLForm.maximumSize + 1), .tooLarge(XHTMLForm.maximumSize + 1))
    }

    @Test("refuses a page without a form, or whose only form is commented out")
    func noForm() {
        expectReason("<html><body><p>Nothing</p></body></html>", .noForm)
        expectReason("<!-- <form action=\"/a\"></form> -->", .noForm)
        expectReason("", .noForm)
    }

    @Test("refuses a form without an action")
    func missingAction() {
        expectReason(#"<form method="post"></form>"#, .missingAction)
        expectReason(#"<form action="  "></form>"#, .missingAction)
    }

    @Test("refuses a form that is never closed")
    func unterminatedForm() {
        expectReason(#"<form action="/a"><input id="x">"#, .unterminatedForm)
        expectReason(#"<form action="/a"><form action="/b"></form>"#, .unterminatedForm)
    }

    @Test("refuses an input with neither id nor name, giving its offset")
    func inputWithoutId() {
        expectReason(#"<form action="/a"><input type="text"/></form>"#, .inputWithoutId(offset: 18))
        expectReason(#"<form action="/a"><input id="" name=""/></form>"#, .inputWithoutId(offset: 18))
    }

    @Test("refuses two inputs with the same id")
    func duplicateInputId() {
        expectReason(#"<form action="/a"><input id="username"/><input name="username"/></form>"#, .duplicateInputId("username"))
    }

    @Test("refuses malformed tags, giving the offset of the '<'")
    func malformedTag() {
        expectReason(#"<form action="/a">< input/></form>"#, .malformedTag(offset: 18))
        expectReason(#"<form action="/a"><input id="a""#, .malformedTag(offset: 18))
        expectReason(#"<form action="/a>"#, .malformedTag(offset: 0))
        expectReason(#"<form action=>"#, .malformedTag(offset: 0))
        expectReason(#"<form action="/a"/ >"#, .malformedTag(offset: 0))
        expectReason(#"<p>1 <= 2</p>"#, .malformedTag(offset: 5))
        expectReason(#"<form action="/a"></form"#, .malformedTag(offset: 18))
        expectReason(#"<?xml version="1.0""#, .malformedTag(offset: 0))
        expectReason(#"<html><!DOCTYPE html"#, .malformedTag(offset: 6))
    }

    @Test("refuses an unterminated comment, giving its offset")
    func unterminatedComment() {
        expectReason(#"<html><!-- <form action="/a"></form>"#, .unterminatedComment(offset: 6))
    }

    @Test("refuses unknown and malformed entity references, naming them")
    func invalidEntity() {
        expectReason(#"<form action="/a?x=1&nbsp;y"></form>"#, .invalidEntity("&nbsp;"))
        expectReason(#"<p>Tom &amp Jerry</p>"#, .invalidEntity("&amp"))
        expectReason(#"<p>&#xD800;</p>"#, .invalidEntity("&#xD800;"))
        expectReason(#"<p>&#0;</p>"#, .invalidEntity("&#0;"))
        expectReason(#"<p>&#;</p>"#, .invalidEntity("&#;"))
        expectReason(#"<p>&#12a;</p>"#, .invalidEntity("&#12a;"))
        expectReason(#"<p>&#x110000;</p>"#, .invalidEntity("&#x110000;"))
        expectReason(#"<p>a &</p>"#, .invalidEntity("&"))
    }

    @Test("decodes numeric references beyond the BMP")
    func numericEntities() throws {
        let form = try XHTMLForm.parse(#"<title>&#x1F600; &#233;</title><form action="/a"></form>"#)
        #expect(form.title == "😀 é")
    }

    @Test("error descriptions name the problem and the input id or offset")
    func errorDescriptions() {
        #expect(XHTMLFormError(.duplicateInputId("username")).description == "invalid XHTML form: more than one input has the id 'username'")
        #expect(XHTMLFormError(.inputWithoutId(offset: 18)).description == "invalid XHTML form: the <input> at offset 18 has neither an id nor a name")
        #expect(XHTMLFormError(.tooLarge(2_000_000)).description == "invalid XHTML form: page is 2000000 bytes, more than the 1048576 allowed")
        #expect(XHTMLFormError(.invalidEntity("&nbsp;")).description == "invalid XHTML form: unknown or malformed entity reference '&nbsp;'")
        #expect(XHTMLFormError(.noForm).description == "invalid XHTML form: page has no <form> element")
    }

    @Test("every truncation of the login page parses or throws, and only complete forms parse")
    func truncations() throws {
        let bytes = Array(Self.loginPage.utf8)
        let formEnd = try #require(Self.loginPage.utf8.byteOffset(of: "</form>")) + 7
        var parsed = 0
        for length in 0...bytes.count {
            let prefix = String(decoding: bytes[..<length], as: UTF8.self)
            do {
                let form = try XHTMLForm.parse(prefix)
                #expect(length >= formEnd, "prefix of \(length) bytes parsed without </form>")
                #expect(form == Self.loginForm)
                parsed += 1
            } catch {
                #expect(length != formEnd)
            }
        }
        // The prefixes that end between tags after </form>: "</form>", "</body>", "</html>".
        #expect(parsed == 3)
    }

    @Test("random and tag-like byte strings never crash, and parsing is deterministic")
    func randomInput() async {
        // Made and parsed on an OS thread (under ThreadSanitizer that takes seconds, which a Swift
        // concurrency thread must not spend); what broke is judged here.
        let (parsed, broken) = await OSThreads.run { () -> (parsed: Int, broken: [String]) in
            var generator = SeededRandom(seed: 2024)
            let fragments = [
                "<", ">", "/", "=", "\"", "'", "&", ";", "#x41", "&amp;", "!--", "-->", "<!", "?", " ", "\n",
                "form", "input", "label", "for", "id", "name", "action", "</form>", "<form action=\"/a\">",
                "<input id=\"", "kc-error-message", "title", "a", "é", "\u{0}", "]]>", "<![CDATA[",
            ]
            var parsed = 0
            var broken: [String] = []
            for round in 0..<3000 {
                let text = round % 2 == 0 ? generator.randomBytesText(upTo: 200) : generator.soup(of: fragments, upTo: 60)
                let first = Result { () throws(XHTMLFormError) in try XHTMLForm.parse(text) }
                let second = Result { () throws(XHTMLFormError) in try XHTMLForm.parse(text) }
                if first != second { broken.append("not deterministic: \(text.debugDescription)") }
                guard case .success(let form) = first else { continue }
                parsed += 1
                if form.action.isEmpty { broken.append("empty action: \(text.debugDescription)") }
                if form.method != form.method.uppercased() { broken.append("method not upper case: \(text.debugDescription)") }
                if Set(form.inputs.map(\.id)).count != form.inputs.count { broken.append("repeated input id: \(text.debugDescription)") }
            }
            return (parsed, broken)
        }
        #expect(broken.isEmpty, "\(broken.prefix(5))")
        // The fragment mix is built to reach the success path sometimes, not only errors.
        #expect(parsed > 0)
    }

    @Test("a page near the size limit with many inputs parses in one pass")
    func largePage() throws {
        var page = #"<form action="/a" method="post">"#
        for index in 0..<15000 {
            page += #"<input type="hidden" name="f\#(index)" value="&amp;"/>"#
        }
        page += "</form>" + String(repeating: "&amp;", count: 30000)
        #expect(page.utf8.count < XHTMLForm.maximumSize)
        let form = try XHTMLForm.parse(page)
        #expect(form.inputs.count == 15000)
        #expect(form.inputs.last == XHTMLForm.Input(id: "f14999", name: "f14999", type: "hidden", value: "&"))
    }
}

extension String.UTF8View {
    /// The offset of the first occurrence of `needle`, for computing expected offsets in tests.
    fileprivate func byteOffset(of needle: String) -> Int? {
        let haystack = Array(self)
        let pattern = Array(needle.utf8)
        guard pattern.count <= haystack.count else { return nil }
        return (0...(haystack.count - pattern.count)).first { Array(haystack[$0..<($0 + pattern.count)]) == pattern }
    }
}

@Suite("XHTMLForm.errorNotice")
struct XHTMLErrorNoticeTests {
    @Test("reads the notice of an error page that has no form")
    func errorPage() {
        let page = """
        <?xml version="1.0" encoding="UTF-8"?>
        <html xmlns="http://www.w3.org/1999/xhtml"><head><title>Error</title></head>
        <body><div id="kc-error-message" class="alert" data-error="unknown_client"><span>client &apos;X&apos; is
          not known</span></div></body></html>
        """
        let notice = XHTMLForm.errorNotice(in: page)
        #expect(notice?.code == "unknown_client")
        #expect(notice?.message == "client 'X' is not known")
    }

    @Test("is nil for a page without a notice, a malformed page and an oversized one")
    func noNotice() {
        #expect(XHTMLForm.errorNotice(in: "<html><body>maintenance</body></html>") == nil)
        #expect(XHTMLForm.errorNotice(in: "<div id=\"kc-error-message\" data-error=\"x\">a &bogus; b</div>") == nil)
        #expect(XHTMLForm.errorNotice(in: String(repeating: " ", count: XHTMLForm.maximumSize + 1)) == nil)
    }
}

@Suite("XHTMLForm attribute handling")
struct XHTMLFormAttributeTests {
    @Test("attribute names match in any case, and values are entity-decoded before they are compared or kept")
    func namesAndEntities() throws {
        let page = #"<FORM ACTION="/x?a=1&amp;b=2" Method='post'><DIV ID="kc-error&#45;message" DATA-ERROR="e&amp;1">Bad</DIV><input NAME="u" TYPE="TEXT" VALUE="&lt;v&gt;"/></FORM>"#
        let form = try XHTMLForm.parse(page)
        #expect(form.action == "/x?a=1&b=2")
        #expect(form.method == "POST")
        #expect(form.errorCode == "e&1" && form.errorMessage == "Bad")
        #expect(form.inputs == [XHTMLForm.Input(id: "u", name: "u", type: "text", value: "<v>")])
    }

    @Test("a malformed reference is an error even in an attribute or text nobody reads")
    func unreadEntitiesAreChecked() {
        #expect(throws: XHTMLFormError.self) { try XHTMLForm.parse(#"<form action="/x"><input id="a" data-x="&bogus;"/></form>"#) }
        #expect(throws: XHTMLFormError.self) { try XHTMLForm.parse(#"<form action="/x"><p>a &bogus; b</p><input id="a"/></form>"#) }
    }

    @Test("the first of repeated attributes wins, valueless attributes read as empty")
    func repeatedAndValueless() throws {
        let form = try XHTMLForm.parse(#"<form action="/x" action="/y"><input id="a" id="b" disabled value/></form>"#)
        #expect(form.action == "/x")
        #expect(form.inputs.map(\.id) == ["a"] && form.inputs.first?.value == "")
    }
}
