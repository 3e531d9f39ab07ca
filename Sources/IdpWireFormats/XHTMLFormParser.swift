/// The single-pass scanner behind ``XHTMLForm/parse(_:)``.
///
/// It builds no tree: it streams tags and text and keeps only the few facts a login form needs,
/// so time and memory stay linear in the page size. It reads the page's UTF-8 bytes in place
/// (``withPage(_:_:)`` lends it the string's own storage, no copy). Each tag's name is classified
/// once (title, label, form, input, another void element, other), and so is each attribute's
/// name: only the first `id`, `name`, `type`, `value`, `for`, `action`, `method` and
/// `data-error` of a tag are kept, where their values lie in the page, and every other attribute
/// is checked and dropped. Names are compared where they lie (ASCII case-insensitively, length
/// first); values become strings only when a fact needs them, decoded straight into the string's
/// storage, and the text of a title or label that is one plain run of the page is never copied
/// before it becomes a string, so an ordinary tag or text run costs no allocation. Every index is
/// checked against `bytes.count` before use, so truncated or random input ends in a thrown error,
/// never a trap.
///
/// Its methods are `mutating` even where they only read: a non-mutating method of this large,
/// noncopyable struct is handed all of it, copied byte for byte, on every call, and a mutating one
/// only its address.
struct XHTMLFormParser: ~Copyable {
    /// Text being collected for an element until its matching end tag.
    private struct Capture {
        var active = false
        /// Where the element's name lies in the page; nested elements of the same name (ignoring
        /// case) are counted so the right end tag closes the capture.
        var tag: Range<Int> = 0..<0
        var depth = 0
        /// The text so far while it is a single plain run of the page (empty before any text): the
        /// usual title or label, read where it lies.
        var run: Range<Int> = 0..<0
        /// Whether the text is in ``text`` instead: a second piece of text or a decoded reference
        /// arrived.
        var copied = false
        /// Reused from capture to capture.
        var text: [UInt8] = []

        mutating func start(tag: Range<Int>) {
            active = true
            self.tag = tag
            depth = 1
            run = 0..<0
            copied = false
            // An empty array's storage is shared, and "emptying" it with its capacity kept makes
            // a fresh one.
            if !text.isEmpty { text.removeAll(keepingCapacity: true) }
        }

        /// Adds the page's bytes at `range`.
        mutating func append(_ range: Range<Int>, of page: UnsafeBufferPointer<UInt8>) {
            guard !range.isEmpty else { return }
            if !copied, run.isEmpty {
                run = range
                return
            }
            copyRun(of: page)
            text.append(contentsOf: UnsafeBufferPointer(rebasing: page[range]))
        }

        /// Adds bytes that are not the page's own (decoded text).
        mutating func append(_ decoded: [UInt8], of page: UnsafeBufferPointer<UInt8>) {
            copyRun(of: page)
            text.append(contentsOf: decoded)
        }

        /// Moves the text into ``text``, where the next piece can follow it.
        private mutating func copyRun(of page: UnsafeBufferPointer<UInt8>) {
            guard !copied else { return }
            copied = true
            text.append(contentsOf: UnsafeBufferPointer(rebasing: page[run]))
        }

        /// Calls `body` with the text collected, wherever it lies (by address, as the parser's
        /// methods are).
        mutating func withText<Result>(of page: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
            copied ? text.withUnsafeBufferPointer(body) : body(UnsafeBufferPointer(rebasing: page[run]))
        }
    }

    /// A label's text and the id it names.
    private struct Label {
        var target: String
        var text: String
    }

    private enum FormState {
        case notSeen
        case open(depth: Int)
        case closed
    }

    /// What a start tag's name says, decided once per tag.
    enum TagKind {
        case title, label, form, input
        /// One of the HTML void elements other than `input` (`br`, `img`, `meta`, …).
        case void
        case other
    }

    /// The attributes a fact reads.
    enum KnownAttribute: UInt8 {
        case id, name, type, value, `for`, action, method, dataError
    }

    /// One attribute of the tag being read: where its value lies in the page.
    struct Attribute {
        /// `nil` for a valueless attribute, which reads as "".
        var value: Range<Int>?
        /// Whether the value holds an entity reference (and so needs decoding).
        var hasEntity: Bool
    }

    /// The first attribute of each known name of the tag being read: one slot per name, in
    /// stored properties (no array to reach through), and a bit per name saying whether the slot
    /// belongs to this tag, so starting a tag clears one byte.
    struct TagAttributes {
        private var present: UInt8 = 0
        private var id = Attribute(value: nil, hasEntity: false)
        private var name = Attribute(value: nil, hasEntity: false)
        private var type = Attribute(value: nil, hasEntity: false)
        private var value = Attribute(value: nil, hasEntity: false)
        private var target = Attribute(value: nil, hasEntity: false)
        private var action = Attribute(value: nil, hasEntity: false)
        private var method = Attribute(value: nil, hasEntity: false)
        private var dataError = Attribute(value: nil, hasEntity: false)

        /// Empties every slot, for the next tag.
        mutating func removeAll() {
            present = 0
        }

        /// The tag's first attribute named `known`, if it has one.
        ///
        /// Read by address (`mutating`), as the parser's own methods are: a plain getter of this
        /// stored property of the parser is handed a copy of all the slots.
        subscript(_ known: KnownAttribute) -> Attribute? {
            @inline(__always) mutating get {
                guard present & (1 << known.rawValue) != 0 else { return nil }
                return switch known {
                case .id: id
                case .name: name
                case .type: type
                case .value: value
                case .for: target
                case .action: action
                case .method: method
                case .dataError: dataError
                }
            }
        }

        /// Keeps `attribute` unless the tag had one of that name before it.
        @inline(__always)
        mutating func add(_ known: KnownAttribute, _ attribute: Attribute) {
            let bit: UInt8 = 1 << known.rawValue
            guard present & bit == 0 else { return }
            present |= bit
            switch known {
            case .id: id = attribute
            case .name: name = attribute
            case .type: type = attribute
            case .value: value = attribute
            case .for: target = attribute
            case .action: action = attribute
            case .method: method = attribute
            case .dataError: dataError = attribute
            }
        }
    }

    /// The page's UTF-8 bytes, lent for the parse.
    let bytes: UnsafeBufferPointer<UInt8>
    /// The offset of the next byte to read.
    var position = 0

    private var formState = FormState.notSeen
    private var action = ""
    private var method = "GET"
    private var inputs: [XHTMLForm.Input] = []
    /// Where each input is in ``inputs`` by id, for the duplicate check and a label's lookup
    /// once a form has more than a few inputs (a linear search over ``inputs`` before that).
    private var inputIndex: [String: Int]?

    private var title: String?
    private var titleCapture = Capture()
    private var titleSeen = false

    /// A label goes to its input as soon as both have been read, so the first label for an id
    /// wins, like a browser's accessible name. One read before its input waits here: a page
    /// mostly labels each input just before it, so one label waits at a time, with no array to
    /// make. Any others wait in ``laterLabels``, in document order after this one.
    private var waitingLabel: Label?
    private var laterLabels: [Label] = []
    /// The first of ``laterLabels`` for each target, in their place once there are many.
    private var laterLabelTable: [String: String]?
    private var labelCapture = Capture()
    private var labelTarget = ""

    private var errorCapture = Capture()
    private var errorSeen = false
    private var errorMessage: String?
    private var errorCode: String?

    /// Reused for every captured text run with references, so plain text costs no allocation.
    var scratch: [UInt8] = []
    /// The known attributes of the tag being read.
    var attributes = TagAttributes()

    /// Lends a parser the UTF-8 bytes of `text` in place.
    static func withPage<Result>(
        _ text: String, _ body: (inout XHTMLFormParser) throws(XHTMLFormError) -> Result
    ) throws(XHTMLFormError) -> Result {
        var text = text
        // withUTF8 makes a bridged string native and contiguous first, so this always succeeds.
        let outcome = text.withUTF8 { bytes in Swift.Result { () throws(XHTMLFormError) in try withBytes(bytes, body) } }
        // Taken apart rather than read with `get()`, which copies the result out and leaves the
        // original to be destroyed.
        switch consume outcome {
        case .success(let result): return result
        case .failure(let error): throw error
        }
    }

    /// Lends a parser `bytes`, which must be UTF-8 (every string the parser makes is cut from them
    /// at ASCII delimiters).
    static func withBytes<Result>(
        _ bytes: UnsafeBufferPointer<UInt8>, _ body: (inout XHTMLFormParser) throws(XHTMLFormError) -> Result
    ) throws(XHTMLFormError) -> Result {
        var parser = XHTMLFormParser(bytes)
        return try body(&parser)
    }

    /// A parser of `bytes`, which must stay valid while it is used.
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        inputs.reserveCapacity(8)
    }

    mutating func parse() throws(XHTMLFormError) -> XHTMLForm {
        try scan()
        switch formState {
        case .notSeen: throw XHTMLFormError(.noForm)
        case .open: throw XHTMLFormError(.unterminatedForm)
        case .closed: break
        }
        // Moved into the form, not shared with a parser about to be dropped.
        let inputs = inputs, action = action
        self.inputs = []
        self.action = ""
        return XHTMLForm(
            title: title.take(), action: action, method: method, inputs: inputs,
            errorMessage: errorMessage.take(), errorCode: errorCode.take()
        )
    }

    /// Scans the whole page and returns its error notice, if any; a page without a form (an
    /// IDP error page) is fine here.
    mutating func errorNotice() throws(XHTMLFormError) -> (code: String?, message: String)? {
        try scan()
        guard errorSeen else { return nil }
        return (errorCode, errorMessage ?? "")
    }

    /// Whether the text being read belongs to an element whose text is collected.
    var capturing: Bool { mutating get { titleCapture.active || labelCapture.active || errorCapture.active } }

    private mutating func scan() throws(XHTMLFormError) {
        let count = bytes.count
        while position < count {
            if bytes[position] == UInt8(ascii: "<") {
                try parseMarkup()
                continue
            }
            let start = position
            // One pass to the next tag or a reference before it, the usual run having none.
            position = Self.firstIndex(of: UInt8(ascii: "<"), or: UInt8(ascii: "&"), in: bytes, start..<count) ?? count
            if position < count, bytes[position] == UInt8(ascii: "&") {
                position = Self.firstIndex(of: UInt8(ascii: "<"), in: bytes, position..<count) ?? count
                // Checked even when nothing captures it: a malformed reference is an error
                // wherever it is.
                if capturing {
                    if !scratch.isEmpty { scratch.removeAll(keepingCapacity: true) }
                    try Self.decodeEntities(bytes, start..<position, into: &scratch)
                    appendScratchToCaptures()
                } else {
                    try Self.checkEntities(bytes, start..<position)
                }
            } else if capturing {
                appendToCaptures(start..<position)
            }
        }
        // A title, label or error element left open at the end of the page keeps what it has:
        // only the form itself must be complete to be submitted safely.
        finishTitle()
        finishLabel()
        finishError()
    }

    // MARK: - Elements

    /// Takes what a start tag says: a capture's nesting, the title, a label, the error notice,
    /// the form, an input of the form.
    mutating func handleStartTag(_ name: Range<Int>, selfClosing: Bool, offset: Int) throws(XHTMLFormError) {
        let kind = kind(of: name)
        let opensContent = !selfClosing && kind != .void && kind != .input
        // Existing captures first, so a capture started by this very tag begins at depth 1.
        if opensContent {
            if titleCapture.active, namesEqual(name, titleCapture.tag) { titleCapture.depth += 1 }
            if labelCapture.active, namesEqual(name, labelCapture.tag) { labelCapture.depth += 1 }
            if errorCapture.active, namesEqual(name, errorCapture.tag) { errorCapture.depth += 1 }
        }

        if !titleSeen, kind == .title {
            titleSeen = true
            if opensContent { titleCapture.start(tag: name) }
        }
        if !labelCapture.active, opensContent, kind == .label, let target = attribute(.for) {
            labelTarget = target
            labelCapture.start(tag: name)
        }
        // Most tags have no id, and are passed over without a call.
        if !errorSeen, attributes[.id] != nil, attribute(.id, is: "kc-error-message") {
            errorSeen = true
            errorCode = attribute(.dataError)
            if opensContent { errorCapture.start(tag: name) }
        }

        if kind == .form {
            switch formState {
            case .notSeen:
                guard let action = attribute(.action), !Self.isBlank(action) else {
                    throw XHTMLFormError(.missingAction)
                }
                self.action = action
                if let method = attributes[.method], let upper = usualMethod(method) ?? nonBlankValue(of: method, Self.uppercased) {
                    self.method = upper
                }
                formState = opensContent ? .open(depth: 1) : .closed
            case .open(let depth):
                if opensContent { formState = .open(depth: depth + 1) }
            case .closed:
                break
            }
        }

        if kind == .input, case .open = formState {
            try addInput(offset: offset)
        }
    }

    private mutating func addInput(offset: Int) throws(XHTMLFormError) {
        let idAttribute = attributes[.id], nameAttribute = attributes[.name]
        let idValue = idAttribute.flatMap { Self.nonEmpty(value(of: $0)) }
        // An input's name is most often its id again: the same bytes make the same string.
        let nameValue = if let idValue, let idAttribute, let nameAttribute, sameValue(idAttribute, nameAttribute) {
            idValue
        } else {
            nameAttribute.flatMap { Self.nonEmpty(value(of: $0)) }
        }
        let id = idValue ?? nameValue
        let fieldName = nameValue ?? idValue
        guard let id, let fieldName else { throw XHTMLFormError(.inputWithoutId(offset: offset)) }
        if inputIndex == nil, inputs.count >= 16 {
            var index = [String: Int](minimumCapacity: 2 * inputs.count)
            for position in inputs.indices { index[inputs[position].id] = position }
            inputIndex = index
        }
        guard position(ofInput: id) == nil else { throw XHTMLFormError(.duplicateInputId(id)) }
        inputIndex?[id] = inputs.count
        // A value is empty exactly when its bytes are: a reference never decodes to nothing.
        var type = "text"
        if let attribute = attributes[.type], let range = attribute.value, !range.isEmpty {
            type = usualType(attribute) ?? mappedValue(of: attribute, Self.lowercased)
        }
        inputs.append(XHTMLForm.Input(id: id, name: fieldName, type: type, value: attribute(.value), label: waitingLabelText(for: id)))
    }

    /// Where the input with id `id` is in ``inputs``, if one has been read.
    private mutating func position(ofInput id: String) -> Int? {
        if let inputIndex { return inputIndex[id] }
        var position = 0
        while position < inputs.count {
            if inputs[position].id == id { return position }
            position += 1
        }
        return nil
    }

    /// The text of the first waiting label for `id`, if any; the label no longer waits.
    private mutating func waitingLabelText(for id: String) -> String? {
        if let waiting = waitingLabel, waiting.target == id {
            waitingLabel = nil
            return waiting.text
        }
        if let laterLabelTable { return laterLabelTable[id] }
        // A later label that matches stays in the list: no other input can have its target.
        var index = 0
        while index < laterLabels.count {
            if laterLabels[index].target == id { return laterLabels[index].text }
            index += 1
        }
        return nil
    }

    /// Gives a label's text to the input it names if that input has been read (and no earlier
    /// label has), or has the label wait for its input.
    private mutating func addLabel(target: String, text: String) {
        if let position = position(ofInput: target) {
            if inputs[position].label == nil { inputs[position].label = text }
            return
        }
        // The waiting label comes before every later one, so it is set only when there is none.
        if waitingLabel == nil, laterLabels.isEmpty, laterLabelTable == nil {
            waitingLabel = Label(target: target, text: text)
        } else if laterLabelTable != nil {
            if laterLabelTable![target] == nil { laterLabelTable![target] = text }
        } else {
            laterLabels.append(Label(target: target, text: text))
            if laterLabels.count > 16 {
                var table = [String: String](minimumCapacity: 2 * laterLabels.count)
                for label in laterLabels where table[label.target] == nil { table[label.target] = label.text }
                laterLabelTable = table
                laterLabels = []
            }
        }
    }

    /// Closes what an end tag closes: a capture whose element ends, the form.
    mutating func handleEndTag(_ name: Range<Int>) {
        if titleCapture.active, namesEqual(name, titleCapture.tag) {
            titleCapture.depth -= 1
            if titleCapture.depth == 0 { finishTitle() }
        }
        if labelCapture.active, namesEqual(name, labelCapture.tag) {
            labelCapture.depth -= 1
            if labelCapture.depth == 0 { finishLabel() }
        }
        if errorCapture.active, namesEqual(name, errorCapture.tag) {
            errorCapture.depth -= 1
            if errorCapture.depth == 0 { finishError() }
        }
        if case .open(let depth) = formState, nameIs(name, "form") {
            formState = depth > 1 ? .open(depth: depth - 1) : .closed
        }
    }

    /// Appends the text at `range` to every active capture.
    mutating func appendToCaptures(_ range: Range<Int>) {
        if titleCapture.active { titleCapture.append(range, of: bytes) }
        if labelCapture.active { labelCapture.append(range, of: bytes) }
        if errorCapture.active { errorCapture.append(range, of: bytes) }
    }

    private mutating func appendScratchToCaptures() {
        if titleCapture.active { titleCapture.append(scratch, of: bytes) }
        if labelCapture.active { labelCapture.append(scratch, of: bytes) }
        if errorCapture.active { errorCapture.append(scratch, of: bytes) }
    }

    private mutating func finishTitle() {
        guard titleCapture.active else { return }
        titleCapture.active = false
        title = titleCapture.withText(of: bytes) { Self.nonEmpty(Self.trimmed($0)) }
    }

    private mutating func finishLabel() {
        guard labelCapture.active else { return }
        labelCapture.active = false
        if let text = labelCapture.withText(of: bytes, { Self.nonEmpty(Self.trimmed($0)) }) {
            addLabel(target: labelTarget, text: text)
        }
    }

    private mutating func finishError() {
        guard errorCapture.active else { return }
        errorCapture.active = false
        errorMessage = errorCapture.withText(of: bytes) { Self.nonEmpty(Self.collapsed($0)) }
    }
}
