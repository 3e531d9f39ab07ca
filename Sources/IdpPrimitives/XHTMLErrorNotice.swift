extension XHTMLForm {
    /// The error notice of an IDP page (the element with `id="kc-error-message"`), for pages that
    /// have no form, such as an error page: its `data-error` code and its text.
    /// - Returns: `nil` if the page has no such element.
    public static func errorNotice(in text: String) -> (code: String?, message: String)? {
        let page = Substring(text.prefix(maximumSize))
        guard let marker = page.range(of: "id=\"kc-error-message\"") ?? page.range(of: "id='kc-error-message'"),
              let tagStart = page[..<marker.lowerBound].lastIndex(of: "<"),
              let tagEnd = page[marker.upperBound...].firstIndex(of: ">") else { return nil }
        let tag = page[tagStart..<tagEnd]
        let code = attribute("data-error", in: tag).map(decodeEntities)
        let rest = page[page.index(after: tagEnd)...]
        let close = rest.range(of: "</div>")?.lowerBound ?? rest.endIndex
        var message = ""
        var inTag = false
        for character in rest[..<close] {
            if character == "<" { inTag = true } else if character == ">" { inTag = false } else if !inTag { message.append(character) }
        }
        let words = decodeEntities(message).split(whereSeparator: \.isWhitespace)
        return (code, words.joined(separator: " "))
    }

    private static func attribute(_ name: String, in tag: Substring) -> Substring? {
        for quote in ["\"", "'"] {
            if let start = tag.range(of: " \(name)=\(quote)") {
                let valueStart = start.upperBound
                guard let end = tag[valueStart...].firstIndex(of: Character(quote)) else { return nil }
                return tag[valueStart..<end]
            }
        }
        return nil
    }

    private static func decodeEntities<S: StringProtocol>(_ text: S) -> String {
        guard text.contains("&") else { return String(text) }
        var result = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            if character == "&", let semicolon = text[index...].prefix(12).firstIndex(of: ";") {
                let name = text[text.index(after: index)..<semicolon]
                let named: [Substring: String] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'"]
                var replacement = named[Substring(name)]
                if replacement == nil, name.hasPrefix("#") {
                    let digits = name.dropFirst()
                    let value = digits.hasPrefix("x") ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
                    replacement = value.flatMap(Unicode.Scalar.init).map { String(Character($0)) }
                }
                if let replacement {
                    result += replacement
                    index = text.index(after: semicolon)
                    continue
                }
            }
            result.append(character)
            index = text.index(after: index)
        }
        return result
    }
}
