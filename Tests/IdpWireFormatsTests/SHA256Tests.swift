import IdpPrimitives
import IdpWireFormats
import Testing

@Suite("SHA-256")
struct SHA256Tests {
    @Test("hashes the FIPS 180-4 one-block message 'abc'")
    func abc() {
        #expect(Hex.encode(SHA256.hash("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("hashes the empty message")
    func empty() {
        #expect(Hex.encode(SHA256.hash("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Hex.encode(SHA256().finalize()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("hashes the FIPS 180-4 448-bit two-block message")
    func twoBlock() {
        let message = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        #expect(Hex.encode(SHA256.hash(message)) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test("hashes the 896-bit message")
    func longMessage() {
        let message = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"
        #expect(Hex.encode(SHA256.hash(message)) == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
    }

    @Test("hashes one million 'a' in one call and in 1000-byte updates")
    func millionA() {
        let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        #expect(Hex.encode(SHA256.hash([UInt8](repeating: 0x61, count: 1_000_000))) == expected)
        var hash = SHA256()
        let chunk = [UInt8](repeating: 0x61, count: 1000)
        for _ in 0..<1000 { hash.update(chunk) }
        #expect(Hex.encode(hash.finalize()) == expected)
    }

    @Test("matches Python hashlib for every length 0 to 200, one-shot")
    func crossCheckOneShot() {
        for length in 0...200 {
            #expect(Hex.encode(SHA256.hash(Self.message(length))) == Self.hashlibDigests[length], "length \(length)")
        }
    }

    @Test("matches Python hashlib for every length 0 to 200 when fed in odd-sized chunks")
    func crossCheckChunked() {
        let chunkSizes = [1, 3, 5, 7, 11, 13, 17, 63, 65, 127]
        for length in 0...200 {
            let message = Self.message(length)
            for (round, firstSize) in chunkSizes.enumerated() {
                var hash = SHA256()
                var offset = 0
                var sizeIndex = round
                var size = firstSize
                while offset < length {
                    let end = min(length, offset + size)
                    hash.update(message[offset..<end])
                    offset = end
                    sizeIndex += 1
                    size = chunkSizes[sizeIndex % chunkSizes.count]
                }
                #expect(Hex.encode(hash.finalize()) == Self.hashlibDigests[length], "length \(length), chunks from \(firstSize)")
            }
        }
    }

    @Test("matches Python hashlib through the non-contiguous sequence path")
    func crossCheckNonContiguous() {
        for length in [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 200] {
            let lazyMessage = (0..<length).lazy.map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
            #expect(Hex.encode(SHA256.hash(lazyMessage)) == Self.hashlibDigests[length], "length \(length)")
            var mixed = SHA256()
            mixed.update(Self.message(length).prefix(length / 2))
            mixed.update(lazyMessage.dropFirst(length / 2))
            #expect(Hex.encode(mixed.finalize()) == Self.hashlibDigests[length], "mixed length \(length)")
        }
    }

    @Test("finalize leaves the hash usable for more input")
    func finalizeDoesNotMutate() {
        var hash = SHA256()
        hash.update("ab")
        #expect(Hex.encode(hash.finalize()) == "fb8e20fc2e4c3f248c60c39bd652f3c1347298bb977b8b4d5903b85055620603")
        hash.update("c")
        #expect(Hex.encode(hash.finalize()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hash.finalize() == hash.finalize())
    }

    @Test("the digest handed from the stack is the returned digest, for every length 0 to 200")
    func finalizeIntoBody() {
        for length in 0...200 {
            var hash = SHA256()
            hash.update(Self.message(length))
            let handed = hash.finalize { Hex.encode($0) }
            #expect(handed == Self.hashlibDigests[length], "length \(length)")
            #expect(hash.finalize { [UInt8]($0) } == hash.finalize(), "length \(length)")
        }
    }

    @Test("hashes a string as its UTF-8 bytes")
    func stringIsUTF8() {
        #expect(SHA256.hash("héllo 😀") == SHA256.hash(Array("héllo 😀".utf8)))
        #expect(SHA256.hash("héllo 😀").count == 32)
    }

    /// The message of `length` bytes whose byte i is (i*7+3) & 0xFF.
    static func message(_ length: Int) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    }

    /// Generated with: hashlib.sha256(bytes(((i*7+3)&0xFF) for i in range(n))).hexdigest(), n = 0...200.
    static let hashlibDigests: [String] = [
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "084fed08b978af4d7d196a7446a86b58009e636b611db16211b65a9aadff29c5",
        "323b730f87b4e7cc0948351a1c11b757b3026cda6784282576757bca21f12483",
        "6ab0dba1f4f1dfbb37b4f9eeb092c09fca4900ad32bdcd147d8dde35d6c87c35",
        "42a146d9caf95c0d29b3ea8e3574f3c47758bec2cdcb99e6f10381de77ab6d54",
        "c0a7188b4e87d64b5ff6dbedc69629b41ded38b08f0f79b85c5b63ed4a6b4646",
        "f3a8eb3d8bbb31db309b41f071ebabd46006c252a78b5d04dbc86b47cf8ed918",
        "ab764db46a4b504f034619a51475e900366a04738693b13a742845930daf74e4",
        "0865c1be255b33b69c4c1b7df3646cd2b7feab36f595044ab191176f1668d9ad",
        "172f3d817c5cccf034df5292b9dbc5490622eb8c21f8a342e695ece40044c4a7",
        "aadd73eb67f4e48bdb358638d0c42f341afcf9f60d717418d863a6f69238e01f",
        "74b55c9de0be1e88daf5efc4838719c5b96f707bb47f99f5f4a30d7269b0838d",
        "756a339579953083c882d4fd4249fc97f82a510069b3ef7384cd7c76dc1d46f8",
        "da92597518961b4c9909e090fcb1e11200e76b57a936ad0c54b2c431f9058ec3",
        "a6a744ad474a0ed0df8977a42cc288156c70bbff998472596c6f6dfdf591c684",
        "98b03249d75e642ef41f16fc71486ea85b551fc8c90324be773d3967852f790c",
        "9c94926dfb94433e790f2c209e2633b2dd3e922b2741ac687e164d488d1ff67c",
        "bbc485bd3e9865564c1d1fdf5cccf969c6435d86eda9256acf9bba7f5dd69eb7",
        "4929dcd438730a2d11486af19aca9d2c9a6187246f6477f54dbae76588fa7eaa",
        "e22bd9f643244050a9a8a809ff876f0319d603d01cac562fa369025e547c86ea",
        "cb0b638f9fd1fd3d3a5310ef9160d16a8a50e30b8ff1bbeba11897246ebc3275",
        "dd59e815a7a25db12b7764ca6a3c3c7589b5eb3cffe51b9532526832245e12a0",
        "7f5e1b7371adc30c9da908a8c45b863126839b9b92f6655ea1e30106b9434695",
        "0c2227ce84dedb8c713405705af85dd9b9782a6bb9f2d4de91273e198e64d509",
        "73281455a5e6186744d4ddbb1d5a10958c9d8e34f150c9f8912eaa4b8f3996ad",
        "fa9766ea344626dd9936ebfc2790476cf5f2d8c4c75e2a3d33c052cd20221f72",
        "5492dff8d285d13c0a037f75a4796474a5d2da0cf3cfbba82e9eec74f415d884",
        "8876c6114debb0978f5ffbbdd794f616d1cd0699d5934f37c94fe1bc1161a93f",
        "a6940de8ec80c86afee42391dcdd7d97b32c72ce8839775b1a2518c1487eb197",
        "52bbbbd714150af8ea8c40af59263ee53f6a161744800e5e5ff6d61a47702296",
        "f1eab075947c8bcf6f1c8d5dbac66efe80756dd32ccb31c6f527a36c09889cae",
        "721f1b54dd0f746ef819ba479fcd63b6117bfbe44acc432bf0cb0a639fd41766",
        "ab5f8b5cb9435354c7b58603592d5faf081e17ceb05f7a7c67f4b666f12ca457",
        "90f90857a7d1aad4925c6d5edbda0abfc8270e3fe5d6da2dd5eae75009cd7609",
        "c296690862799313d4df91200f74bfa61b3853ac4a8973a7417b8cf1ae7ab260",
        "028250999c5186460b292bc5533202c55561b60da19f0c034695a60b4c2ac5fe",
        "a7aba4ca5c33084110dd834aed55b0854a3b01cda64777e490ac02e7e7b7446d",
        "b11e919ce284b7e028be56562412b1eda22aeabd890995754fa3a9847c69a20c",
        "afa3a9b2b3c085cf8080ad146188b68dc850ce9b8b0627548e0f39ddba638a76",
        "90663c41a474e299b9eca62670670b088c213759b935c2d68319fa78d0099df4",
        "0873681bd0f82f74733bd4b4639467130c6ff71a09281210ed60c3dc95d6aa90",
        "fe877131379e5bbff19e5b14abafe41a724a6fe36e70bc3e2d0c6267da4dd52d",
        "d9fcbc5f1a9f3a7d79ef20f215fd96f7c069b30d37b42e8bbda878cbeffc6afb",
        "6c980fe8293c22ff9ced813a37e4619e5cd7f35c141082a49536a7f5d79f2790",
        "f990f6ed8d1cbc3a5d64bb9068493cb734c06cc91a6d755d2e8f938fa02d7a52",
        "98ce1f7bd0cb468ff2efc7e1cace2d2e56c4b61f7376e98194a6139579608513",
        "736b0a4e151af6d6f514103ecf7f038e23cbfa64d8f3d7387e238b6d7253b308",
        "9b6073af8d49f2fef313e24f9005e857d4726b01543bfe641adbb7a4f33c2211",
        "31cedec8e83dc0fb13e8ba27dfd62dd11aefa1923d78bfbade0eb4f339636144",
        "5649348a03738691f8dc40791868b8847833dee22142f777bf7c2a5091e262e6",
        "9898428b82ee6f679753036472bedb74701161801f29526e7201e0dcc600bcdc",
        "75e248b3da4cae96bfa15e251859d860c3bd8a137352771729d4dc45c6dac025",
        "8230c270cd48aa1a4303308ce02ea63eaffb2480124f34b20726806556522e1f",
        "9f17a1b3d8f9affdc77869490f25a03b2450c66409ec4b106ad7112cc66d2d36",
        "160bbf14b458c877b7049e7cb5771dd653930f97d20bdd8ee795c16062906233",
        "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b",
        "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27",
        "35df609437dcfea3279283ab79fd554e2bf78f8f7ae2de532d8ee300b09e8f73",
        "9afd9e8bcdb57c7c3a445ee45dd8050df9e187efe7f35506dbbfd91262292f08",
        "3f67cd873703688f9cfe32074b65caec62498407c9556c91368f4575383c25ae",
        "06659a8b0876d0ea2a601ae653912d113996bcfcd772b262e4bd866984d3bfb3",
        "4a28a6c40a8e8306eda3f334638ec1028415607a8c6989d48b864ac79106b5f3",
        "5b50d7a374c35bf46f501a178cceb2cfe649cd8f96c4a21d57377fcbb0eec4ab",
        "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055",
        "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241",
        "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e",
        "11fdf00350687cdd9dc4312de9734ad3ddf5eeb4d0c442ad34b05f3e484e8ffd",
        "06e3cd2ed0fa6071c44dc044441f1d16e92b7505ce10787230dc895fcc6622b2",
        "c23b56ccb21ebf78c5401dc6257f22e536b6d9b36214a68c899706f7cfc14e83",
        "ca32376f1ceca93d6bc43b8fcd47e6ec7b20dbac0ee3f62f4a0c4dad838bb7b7",
        "fb1907e541f9c81501e95cc95fbfacb263bab1990ae9b54272673d5107511d52",
        "54cac60524e8d20657ff88ee3951e22a506f3d8dc22c8fa848ce494672cb0d29",
        "99e356eadffa802796fb42722352b16dfc8a61806bf11bdd3590d0f0bfdaef5d",
        "64bee9b0cccaaa16864211d3337214839db10309e7156e3c0e168748682fa260",
        "3ebc4be43f93cac2357d1a462636e79762b7026fb80db09f2790cc9461d22bc1",
        "08182253830d4d2b1fa510c5abe3af40e0ad81738a23469ad29b449b07b1e7c8",
        "65cf2b7beb0ba72fdb797686cce8857dab0caf5ee1a0c7c103c21e00e6051020",
        "1f21d7fe24283682a46a35d86d909513487ff5292634890454ed882a66b28f12",
        "87fa111ce4e78d2db52185af0e4376493d725de46c91d007d19e7dd533d0a17a",
        "2a4808f9dfc6e27024e647b2bfe62399827947143e8ca89a5c012f6d3d8429a2",
        "c6b3377d81c23312e11ac4a33e9e87b00ec1cb167b13c97d69657b8e3820a74e",
        "5876ebcb920052ecaa77c05f36aad54d33ae2f24722b777b3a2f33d17c2a7d4a",
        "eb52f62be6fe52e68abcdaea3cd0b55bd48221c9c4f9eb8f59ffda517e10ed78",
        "2f0795e2f484bd5abe26322a2c2e125d1e5d93e57a1b57cafbcf3c622f158ae0",
        "442975e01ac274365ba2c42b68e320fa3b46b9d28039143ff1bfa443a7571325",
        "b690f6f0cc86111bb0bcd93678c57711596e1869158856e9e9e36f8764261f27",
        "b876ad022f68deab857e9da23c8e1f1736935f9cec1bf2c9a51aefde2317e663",
        "ff4ec8cd0185eaaa7c4d7e99798430b932b89f524d0e73ae9d2efc1b99275bf3",
        "b16ffce5f3d16040ca4ed8416f31632c7497967eb22769d4bdc4a959f8029b16",
        "bb743aa18f1db05620a1480c257b3164fbeb4760f2b848145e404de72931f87d",
        "4d39e6aed7920542bd34fabeb7b083538825f6aa996b431eb92c640c80c5420a",
        "85373e64524dff047f5423100fa3b9328efed49f49bf9ba752aa1e01708137f8",
        "f8368d09ac1e1afdbcd737ff9e751099b9109daf3036fa49ed1ff1609025beeb",
        "4d0d2d32697292391dc0199b3eacb82c5ad0dc38a2770adb3ce8044f869d128f",
        "5028666bd79edd2bede28bdeee2d7a95c01dbbd4284a8c5b30a998ee8d7ed3e0",
        "3a23c9132a8635ad65b1055484a4d241b70ea94ed89c4d96e22ceec9daae992c",
        "c9f1a5f79d7bea01a54f4edb41673722f627ee2e82dda324946b63cf4b9b16af",
        "9b5d66321a0d92249c95aca5a045580afd9b9ddcdb4ada96a94bee84d2d99716",
        "af680818335f180a11ea361e316a6100ae6dd5c83066e51867b08cb6e8ba600b",
        "5e4edd8413b312a4d85297f6e89146bacf0d9714495a1e83dc9f63c0037f0d30",
        "5a2cda2351d1cdd9dd7957e57c0b3c8522451f25b6494569b7e94388c46f0980",
        "48719cf73125f924294a140de9d41efe9fdad8e520c55c541127ea709ef0554e",
        "9f0fc4c34f14e7a45bef6a016dc2f4fdb0c858d61247d13c6d41241b2011c686",
        "9313cf73a730ac07b74d681e6a73eec8a1593f4e3ae7557ddd77b44c980e0571",
        "5af877de0ea99d70bd0a547c967dbecd4525d6bba9ab2917d54d6aa742874687",
        "af7d44bcc0959aaadbb7e6fb4cf6845c186e6a1cd2041132020f6aa7ac57911b",
        "0e99348634f0dd8367d7f75bb4fbad8297971625a5424b6eb1ec7f0ac453ae43",
        "9dfada1b2877f5075474bb3596d89600053831161f4a2fe6ecb3fbea85826bc5",
        "e0cfd9f04dd5ddba567539bcd694ce47cff5ac057cb56b80127fcd3a604f2a7a",
        "6a9c24a9d2f86056d9f3989044d43ebf4ed1723cb4ee1660c818e01225f42621",
        "4a70b5e28bfd48b3786770f8bc1c3c1967c9d5bc01872993580e22646e94c2c6",
        "67d9492e628fd376e0b2efec8ca2b99b123e202cf620deb270728df979b2f73e",
        "96b928cff8528dbb99602c709a65b846cb6467acb8b722f0d758e4dc27bfc508",
        "cded73eed7df41eecd1ead825a38ca8763a9e910d5181c8ad8f201cc8ff2cbe4",
        "5155ce162330c6949d409b5885ee847afbf0bad1fbae8fcc61cf754ba4e247fa",
        "c2030f07255ace70eea17370a5af9fabfad29be0bbf6a3f56f195531e2d7e0a7",
        "556cbf3481676c7f963e52baf7dd49ea0eb300e74d2a85b8e2a691973b41a888",
        "867b32635b088696679312aa02f4aa845828dfe86f339c411824f9eceb2863f8",
        "2c49b89c5aaaaaa69ae70251cc0803f14afaf1a2caa461fa6b083750bc07ce88",
        "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e",
        "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5",
        "1189a98a00c71bc1848ea8bdc9700b442bee0be7c3f45172303f1ab0b6f1617e",
        "60937afbb66acb0675a2f516774b22b7e8de46bfe263ea3d8f5d4872627f6045",
        "229c92a5abffa5300cee76bdc526a40ef85e0479d6eb13c8d875befe8e2c267c",
        "2f781a36cc860b1020a4713b6657730a78042b2f240c07aac35a386030a0cdb1",
        "b402a31c521e6cad6a9bc39d4448234905d72f412eff7f761210eed6bac737d9",
        "3d11be9920ed2c431ed505b9c790bb4a17398bb1e0977f978efbd357c3b3fbd2",
        "a8d23e75d936f303d248888d9b165ee543f4cbafcad3c9dd2a79bd84faa11d07",
        "d2742f1f4ac6bb7ca2b239ee18402ba8b3f9f8e652d2a72973c2b9ba11c08cf6",
        "307f8fc2c1622b92762e818d39a185d4d667ad49a4b07ceae1f4afa008a93ec4",
        "4d5e47a2e8510a314576c238f6ff19d389d3ef3aaaca8b2e530263a5d15741da",
        "4c14830d5f17552093a46de0f6884f8f3010789462dab3db3d1cc679575e01ad",
        "9e137d7f97ca5660707269c3401687e0c0e780d967cefe40d8700febed56769b",
        "938d47a3cfef5a4157be8a0d57d982f6784c31428fed751835efe34284949d53",
        "daf759a53a20e10e7b5241f00461aad6f354e2fdbc769a69fdd6a9ef8306114e",
        "357ebb96ceaad098f322cd545ff898c7948507845a63c727fcf6b27ff37ceac4",
        "cafc3beeb530a50bb73465c4593bac4fd06a74a4f5203ec651e858aa03024be7",
        "c9eb70663c864e694427f52c8119b3540200d9d3ef2921bfbc6efa11e48bb17b",
        "f17bf19df47a0f58505891dcbbbdfa4dfdb027e8310feb6133cc6a1daacbe342",
        "436f97498a629ecc27ae0c8c400d9d22ec03dc27c5a9ccc63535efdff20c617d",
        "a0319584bf6543f57b7ccf2ecfdcade98c6f0191878d57a8dd301ff3cf11238c",
        "5432ebb2b25580dbdc3a46b38c281bca87b9e6a4db80de865868d8eca30266f8",
        "9735317a483ccf8010f0fd70efaf872fb83cede8f4740f5b033f33b59b029554",
        "0ddc24e4d5f3b48aa7049d4bcf0e04a0868d829ccd75959bdc611be6c198ed9e",
        "01a4b7965629e3a2ec0a5abb04e129c54b384c6388666e5c0608a45579a59e18",
        "5ca4040cc468887b7bfe59e08c333fda1a6f0e18c2855035b26d5fdbf7bf1d77",
        "b818f3083f2537ca49092cf66ce28a0250aca4fc2a57ccf0b6bcac49a69819e8",
        "7978d4fa8bba6c566e0d8502e5f3d165686638b523d3f5d2e12d6840d2375c5d",
        "598be25ffa382f73bbc2ed68a69806e37c8aab4381737197d28fca8b135dd45c",
        "d8f0382155720b5a48cf0f98b294aad87550e376f60e3356ab66ed1e1a7196d4",
        "c695ceb0b71f85051f19f35d77dcf44ed433c9db49f46d7858a599f6186af365",
        "49fc88692af2d3e4f24523757f99bc8eb4b8d07f8c81555db5cf313e5a1ed8cf",
        "89e426681d4ea3f6159d3f7353d1589f24d79ed980ea76334a48e55697f2eec3",
        "8bb4982a0b829e8cb5f66b9fd2cf9b6fbda1d093764deeeea2a8ff50a62adb94",
        "a06e9007ccee8b9e8a290d557b5c43d72f24d243b840e5cf9f24c43e57e7144e",
        "e7b9640619ecfd3e16d52b45ce12100a776937cc6be6687682201c1f6d3c2fee",
        "6af38ea9a4cf31b67212731a032e0e672648501733c225fcbd1e0c85530c68fc",
        "e0db6570b1ef27761224267b02991f5e51b407daf4d30726e0d49a3fbc7802a7",
        "c9136d8912ae7213e25b73c971064595f3d85a1ef1d754ad7a010257745a5ea0",
        "75dd0c799d5fedcf8d64c61a665e83d13b945cfdda8b155b340d36e50359a02f",
        "53733181e26ade19fde95d5dfbbab11b3ae6b03fa8886352fba69bd929a31932",
        "e338042458044f665acb1ca6701698ab479255e15911f42d417e9f9eb2265e15",
        "b67af1715f9ce9b87cf6bfbde8cbcf2549e53c7e2d87bc8fd55dfde7527b922c",
        "4e45809737c4786aeffe72c23353c2aa7f1a907b3439a8d8d6e7a5b99516d6de",
        "565f913c2725146448fbae5f07ae4313983e7af36606ce35e43443c6b4feb2cd",
        "86cf75d49f20535490203106c5608ca48c28379918584a4c662d089dbb09e355",
        "5c5c337a6bfb040806366c1609a4bd20df4ff26a351edc964e5be29749010c20",
        "07071ef3f5743470c7be5a3d310f74e33e1916ef09837080bc0b5514eb5f3902",
        "20f6c31074c615f906b788192d7dd0bf099d12ee3f9ca3f7363c222d846c68b6",
        "62fcf18a46f2a96d789f6a45cd0bc1ec38dd2d0dca64bf21dc1da4df98f1cc2a",
        "acf89d6c62a39a041a1a8a83ebb43924517dbea5c5f45c379a54e81459d5c624",
        "0b7c6ff9660c09a4a07ecb9f17c799f2fd4b4c2880f00eae7729f01a2c568538",
        "dcaaa39161ed0e54140a7220863242190943c8f49ee89e426378b97b44b7781b",
        "3b564461566a35f79cf750d556c4076bc325d8e5da6e74c22b8700ad15c82a4c",
        "c227ec933805406ab2276a9139ff9ec4d759aa9d7ee03d16aac996e13be8b0b8",
        "7e1cec48a73d90cb9b9706382c65dbb401d2211ca956f76fafccee5a14b21588",
        "d164972771a47e1d3249391512b79d05491160e97467f84e93a12620020e6e34",
        "245255c3c71fe121fb6d14a5bc637104e54844251c512860d822a90a48f3a632",
        "b79da2616b4143fb4ed8b7778cf95201e38d39914a7ad3c1498d20e50cf9ba48",
        "ca3b381737ced739b50f75bb474c8cf3cc6a2daef16b46bf9e1926c0cc05e6b2",
        "ca7b2e47708f0548b827ab1132a16b75dee1eb6a78c86829c47556f52df8892f",
        "d56a75d93f97143060e15e110715da494174dbf210f3e1a9d3cffe5afb809ae5",
        "81b6680967848038d572d41fc92818fea8da2bc2fa24d80301e2a116f06db96a",
        "80e7b84a99c797730865825b4614ead40b157674e54de7f6b07361f10317b866",
        "9104901c5fb45016420078acb248323481f2389bc96f790fe692f5a81ca358fe",
        "1ec67f2951dbea9fb1644eba6dcf63c3f058e839bebcf485b0cda9afa2ac6ec2",
        "0513cc827608a0a8e3bec95f6d15668cd143827b13f6da95159543b55ea03b47",
        "880241117e391e6b7a0dbeed8af46fd0c253bdaebe0719cc99d685a033b221d7",
        "95f7b19d4a1782b3a377541abca3cf99609cbf723112a8657247fe817010bcf9",
        "40926ffc9b1db97cde9ffbf6abf6c179bed86f6742dde189f54c92616edf2ef2",
        "e556731bc9abde2db4d2cb0a00042c5c56af1807730757de40f797326de07259",
        "52be17f8f5d0b166f3b1917d2b6bb862083001967fd0aa39d2da9947eeba437d",
        "ec6732214091fa8455ee2251fb756475b04ec62610fbceaa64218a11faf571cd",
        "c2e8235fc1c184c4f889cc8e481540dd11356b65b7c3bf4a0443f6be2851dcd5",
        "68c8e720f2d90970c8a77b7133c0d0041a5c40daccfd05ff9a214fa0e192a830",
        "50f5cc263a9f73517f0827b7239d088e0ad09adb071e46c16a0844a4024b0470",
        "a5aa39eb1d6525a4f267f1046553f8daa082e15354eb9a3e3a91f3b2b3482bca",
        "c81fe8b267e3e5df58bb5607d9e98332cc3eb341a1c6d430a9f7e5a6a141751a",
        "f676b42136810ec9f51f5a8ea6b7b6af8a74424125f4be26af7b3a2d040e4ac6",
        "95f3888c8357f95228d4d883e44b068f6b24c50ace66db0dc3206d818bbe576c",
        "2c7e18c942ef065b526a2d4e5546283749cd3ddfb51d8fc71f42717363685f46",
    ]
}

@Suite("Hex")
struct HexTests {
    @Test("encodes bytes as lower-case pairs")
    func encode() {
        #expect(Hex.encode([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
        #expect(Hex.encode([UInt8]()) == "")
    }

    @Test("decodes either case and rejects odd lengths and non-hex")
    func decode() {
        #expect(Hex.decode("000fA0ff") == [0x00, 0x0f, 0xa0, 0xff])
        #expect(Hex.decode("") == [])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
        #expect(Hex.decode("0x00") == nil)
        #expect(Hex.decode("é0") == nil)
    }
}
