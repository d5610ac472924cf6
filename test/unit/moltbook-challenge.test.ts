import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { solveChallenge } from '../../src/providers/networks/moltbook-challenge.ts';

/*
 * Challenges as agents met them on Moltbook (quoted in public agent session
 * reports and in the READMEs of public solvers, February 2026), one per shape
 * the solver has to read. The answers are the arithmetic each question asks for.
 */
const answered: { shape: string; text: string; answer: string }[] = [
  {
    shape: 'a rate "per second" followed by a gain is a sum, not a division',
    text: 'A] lO.bSsStErR~sWImS^ aT/ tWeNtY ThReE{ cEmMeN tEeR}s pErR sEcOnD, um| tHeN gAiNs- sEvEn} cEmMeN tEeR}s pErR sEcOnD, wHaT] Is^ ThE/ tOtAl< vElOcItY?',
    answer: '30.00',
  },
  {
    shape: 'a gain with "per second" after both numbers',
    text: 'A] lOoB.sT-eR S^wImS[ aT/ tW/eN tY ThReE] cEm-MeTeRs~ pEr| sEcOnD, aNd/ gAiNs[ fIvE} cEm-MeTeRs< pEr| sEcOnD, wHaT/ iS^ tHe] nEw- VeLoOcIty?',
    answer: '28.00',
  },
  {
    shape: 'every word broken into pairs of letters, "gains" among them',
    text: 'A] LoOoBbSsTtEr S^wI mS[ aT tW eN tY fI vE cE nT iM eT eR s /pE rS eC oN d ~ anD{ gA iN S} sE vE n cE nT iM eT eR s PeR sEcOnD - wHaT s ThE^ nE w- vE lA wC iT eE',
    answer: '32.00',
  },
  {
    shape: 'a number split by a symbol inside it ("tW]eN-tY")',
    text: 'A] lOoB-sTtEr S^wI/ mS aT tW]eN-tY tHrEe cEnTiM-eTeRs PeR sE^cOnD, aNd} gAaIiNss^ fIvE, wHaT Is^ nEw- spEeD?',
    answer: '28.00',
  },
  {
    shape: 'a total of two claws',
    text: "A] Lo.oBbSsStErR' s ClAwW ]fOrC e Is^ ThIrTy] TwO N[eW-toNs, Um- AnD ItS OtHeR ]ClAwW Is^ TwElVe N[eW-toNs, WhAt] Is^ ThE ToTaL FoR-cE?",
    answer: '44.00',
  },
  {
    shape: 'a total with a preamble of unrelated words',
    text: 'A] LoBsT eR S^wImS Um BuT Cl Aw UsEs FoRcE- To HaNdLe PrEdAtOrS, ClAw] FoRcE Is ThIrTy FiVe NoOtOnS ~ AnD { thE } OtHeR ClAw ExErTs TwEnTy EiGhT NoOtOnS, HoW/ MuCh] ToTaL- FoRcE Um?',
    answer: '63.00',
  },
  {
    shape: '"reduces it by" and "remains"',
    text: 'A] LoO bS tTeErR sW/iMmS~ aFtEr MoLtInG, ClA w^ FoRcE iS TwEnTy ThReE noOtOnS{ - }wHiLe~ wAtEr PrEsSuRe ReDuCeS iT bY SeVeN nOoToNs, hOw MuCh FoRcE ReMaInS fOr ThE lo.obst errr cLaW?',
    answer: '16.00',
  },
  {
    shape: 'a lone "]" between tens and units, then "slows by"',
    text: 'A] LoO bSsTtErRr- S^wImS[ aT/ tW eN tY ] tHrEe mE^tErS- aNd] SlOwS/ bY fIvE, WhAtS/ ThE nEw- SpEeD?',
    answer: '18.00',
  },
  {
    shape: 'mass times acceleration is the force',
    text: 'A] LoOObSsT-eR sS^ MaSs Is ThReE * KiLoOgGrRaAmSs AnD iIt AcCeLeRaTeS At TwOo MeTeErRs/ PeR sSeCcOnNdD^ SqUaArReDd, WhAaT iIs ThE FoRcE NooToOnNsUm, lxObqst?',
    answer: '6.00',
  },
  {
    shape: '"gains" then "total"',
    text: "A] LoOoBbSsTeR^ ClAw FoRcE Is ThIrTy< NoOtOnS, Um| AnD It GaInS TwElVe} DuRiNg- MoLt, WhAt'S> ToTaL/ FoRcE?",
    answer: '42.00',
  },
  {
    shape: 'every letter doubled ("TwEeLlVvE", "GaAiInSs")',
    text: "A] LoOoBbSsTtEeRr ]'S ClAaWw ExErTtSs ] FoRtY^ NeWwToOnSs ~ AnD GaAiInSs ] TwEeLlVvE { MoOrRe } AfTeR MoL tInG, WhHaTt'S ] ThHe ] ToOtAaLl ClLaAwW FoOrCcE?",
    answer: '52.00',
  },
  {
    shape: 'a number broken in three ("F oU r") and "reduces"',
    text: "A] LoOoO bSsStE rS^' ClAw| ExErTs/ tH]iR tY~ tHrEe } nEeWwOoTtOnS- AnD< W aTeR^ PrEsSuRe\\ rEdUcEs- FoRcE] bY/ F oU r~ nEeWwOoTtOnS, Um{ WhAt| 'S ThE} NeT^ FoRcE?",
    answer: '29.00',
  },
  {
    shape: '"multiplies" with a decoy word holding "six" ("pHyYySsIxX")',
    text: 'A] lOoObSsTtEeRr ] sW^iMmS lIkE ] a ] pHyYySsIxX ] eXpErT, ] cLaW^ fOrCe ] oF ] tWwEeNnTtY ] sEeVvEeN ] nEeWwOoTtOnNs ] bBuT ] iN ] a ] dOoMmInAnNcEe ] fIiGhT ] iT ] mMuLlTtIiPpLlIiEeS ] iTs ] fFoOrRcCe ] bBy ] tHrReEe, ] hOw ] mMuUcCh ] fFoOrRcE ] nNoOw ] iIs ] tHeN ]? ]',
    answer: '81.00',
  },
  {
    shape: '"times", with tens and units run together',
    text: 'A] lOoOoBbSsStTeErR wI/tH ^ a- cLaW] fO^rCe O f- tHiRrTy T wOo] nEeU-toNs ~ tiMmEs < fOoOuR | iN wAtEr, wH-aT iS tOtAl ~ fOrCe?',
    answer: '128.00',
  },
  {
    shape: '"multiplies" in the first sentence, the numbers after it',
    text: 'A] lO-bS tErS^ cLaW ]fOrCe| iN~ wAtEr, tHe^ lObStEr muLtIpLiEs dOmInAnCe um, tHe fIrSt cLaW iS tWeNtY tHrEe NeWtOnS aNd ThE sEcOnD cLaW iS fIvE nEwToNs',
    answer: '115.00',
  },
  {
    shape: '"multiply" broken in two and "per second" as a unit',
    text: 'Lo]bS-tEr S wI mmS aT tW/eN tY ThReE mE tE rS pE rS eCoNd, ClA]w F oR-cE ExE rT s FoU r NeW tO nS, MuLtI pLy To FiNd ThE ToT aL ThRuS t?',
    answer: '92.00',
  },
  {
    shape: '"the product"',
    text: 'lOoObSsTtEr] sWiMmS~ aNd- aNnTeNnAaS tOuCh] iN dOmInAnCe } fIgHt, uMm; iT sWiMs/ aT tWeNtY fIvE ] cEnTiMeTeRs- PeR sEeCoNd \\ aNd- iTs- cLaW^ eXeRrTs < tHiRtY ] nEeWtOnS, wHaT- iS } tHe- PrOdUcT?',
    answer: '750.00',
  },
  {
    shape: '"multiply by" and "the product"',
    text: "Du]RiNg lO^-bSt-Er'S dOmInAnCe fIgH-t, a] lOoOobS-tEr eX^eRrTs fOrTy FiV-e nEeWtOoNs~* aNd, iT sTrEtChEs mOlT lEvErAgE mUlTiPlY bY tW[eLvE nEeUtoOns, uM wHaT iS tHe pRoD-uCt?",
    answer: '540.00',
  },
  {
    shape: 'a rate per second for a number of seconds is a distance',
    text: 'A] lOoO b-SsT;eR sW/iMmS~ aT^ tWe NtY] tHrEe mE^tErS/ pEr sEeCoNd, fOr fOuR sEcOnDs; hOw| fAr< dId tHe> lo.bStErrr gO?',
    answer: '92.00',
  },
  {
    shape: 'a rate times a span, with a stray letter inside a number ("TrWeEnTy")',
    text: 'A] lOoBbSsTtEeRr sWwIiMmSs^ aT/ TrWeEnTy] FoUr- mEeTtEeR[s PeR\\ sEeCcOoNnDd ~ fOr| ThRrEe} sEeCcOoNnDdS, hOw< fAaR\\ dOoEeS iT tRrAaVvEeL?',
    answer: '72.00',
  },
  {
    shape: 'a pressure per square centimeter over an area is a force',
    text: "A] lO^bSt-Er'S ]ClAw- ApPlIiEs^ tW/eLvE- nEuToNs ]pEr^ SqUaRe- CeNtiMeTeR~ OvEr/ E iG<hT- SqUaRe] CeNtI mEtErS, WhAt/ Is^ ToTaL- FoRcE?",
    answer: '96.00',
  },
  {
    shape: 'force times distance is work',
    text: 'A] lOoObBsSsTtErR ~pU sH-eS[ wItH tW/eNtY fIiVvEe }nEu^-ToNs* fOuR <mE tErS\\ fOr] WoRk, uM hOw^ mUcH- WoRk?',
    answer: '100.00',
  },
  {
    shape: '"adds" after a word that holds "ten" ("AnTeNnA")',
    text: "A] lO^bSt-Er'S ClAw FrO^rCe Is ThIrTy SiX NeW^ToNs ~ aNd{ AnTeNnA ToUch AdDs TwElVe NeW^ToNs, HoW/ MuCh ToTaL FoRcE ]iS?",
    answer: '48.00',
  },
  {
    shape: '"combined"',
    text: "A] lObStEr'S ~ cLaW fOrCe^ iS tHiRtY tHrEe ] nEuToNs / aNd {tHe} oThEr- cLaW hAs~ tW eLvE ] nEuToNs, wHaT| iS tHe- cOmBiNeD fOrCe<?",
    answer: '45.00',
  },
  {
    shape: '"with one claw": a lone "one" is not a quantity; "against" holds no gain',
    text: 'A] lO^bSt-Er S[wImS aGaInSt/ wAtEr PrEsSuRe, BuT/ In A dOmInAncE- FiGhT, tHe Lo.o.bs.tEr ExErTs- tWeNtY fIvE} nEu- tOnS ^WiTh/ oNe ClAw, AnD/ gAiNs~ sEvEn] nEu- tOnS fRoM~ aN oPpOnEnT, HoW/ mUcH ToTaL FoRce- iS tHe LoOobssstErrR cLaW NoW?',
    answer: '32.00',
  },
  {
    shape: '"shears off" after "reduces", with "against" and "gainsta" as decoys',
    text: 'A] lOoO bS t-Er S^wImS[ aGaIn St- A gAiNsTa^ nOySy CuRrEnT, tHe ReDuCeS/ hIs VelAwCiTeE tO tWeN tY cEnTi.MeTeRs PeR sEcOnD, bUt^ a DoMiNaNt L oO bSsTeR pLuNgEs- iN wItH iTs ClAw aNd ShEaRs OfF fIvE, uMh~ wHaT Is/ tHe NeT- VeLoO ciTy?',
    answer: '15.00',
  },
  {
    shape: '"forty" broken after "force" ("fOoR cE] oF fOrT y")',
    text: 'lOoO bSstT eR^ hAaSs/ cLaWw fOoR cE] oF fOrT y] NeW^tOoNs umm, aNd/ gAiNss- tWeN tY fOuR] NeW^tOoNs, wHaT]s ThE/ ToTaL- FoRcE?',
    answer: '64.00',
  },
  {
    shape: 'tens and units each broken ("TwEnT y FoU r")',
    text: 'Lo.bS tErR Cl^aW] FoR cE Is] FoR tY NeW~tOnS AnD] ThE Ot-HeR ClA w AdDs] TwEnT y FoU r, WhAt] Is] ThE ToTaL FoR cE?',
    answer: '64.00',
  },
  {
    shape: 'a question that ends "what is total" with no other verb',
    text: 'LoObBsStTeR] ClAw^ FoRcE] Is TwEnTy- FiVe / NeW-toNs+ AnD LooobssstteR~ AnGtRy Um] ClAw Is NiNe { NeW-toNs, WhAt/ Is] ToTaL?',
    answer: '34.00',
  },
  {
    shape: '"plus" with "fourteen" broken in two',
    text: 'ThIs] lOoO bSsStErr^ sW/iMmS] aT/ tHiR tYy- tWo] cEn Ti.Me TeR s~ pEr] sEcOnD, uM] aNd] iTs] cLaW^ eX eR tS] fOuR tEeN} nOoToNs, pLuS< wHaT] iS] tHe] tO tAl?',
    answer: '46.00',
  },
  {
    shape: '"slow s- by" with a velocity per second',
    text: 'A] lOoObSstT-eR S^wImS[ aT/ tWeLvE~ mEeTeRs\\ pEr| sEeCoNd, uM lO.bSstT Errr sLoW S- bY/ fIvE{ mEeTeRs, wHaT] iS^ tHe/ nEw\\ sPeEeD?',
    answer: '7.00',
  },
  {
    shape: 'a "*" among the noise does not make a product',
    text: 'A] lOoObbSsStTeErR } cLlAaWw { eXxEeRrTtSs ^ thI.r.ty fIiV.eE ~ nEeWwToOnNs / * } aNnTeEnNaA < aPpPlIiIeEsS - twEeLvEeE ] nEeWwToOnNs , hOoWw { mUcHh ~ tOoTaLlFfOrRcEe ? ummm',
    answer: '47.00',
  },
  {
    shape: 'a stray letter inside "twenty" ("tWh eN tY")',
    text: 'lObStEr] eXeR tS^ um] lo.oObS tEr~ eXhItS^ thIrTy] nEwToNs/ anD[ tWh eN tY fIvE] nEwToNs- wHoW{ mUcH] tOtAl^ cLaW} fOrCe< ?',
    answer: '55.00',
  },
  {
    shape: '"loses" and "remaining"',
    text: 'LoObSsTtErR cLaW eXeRtS fOrTy TwO {nOoToNs} - bUt dUrInG mOlTtInG lOsEs sEvEn nOoToNs, wHaT iS tHe ReMaInInG fOrCe?',
    answer: '35.00',
  },
  {
    shape: '"reduces" with numbers in braces and angle brackets',
    text: 'LoO-bStEr^ ClAw ExErTs/ TwEnTy {FiVe} NooToNs ~AnD WaTeR PrEsSuRe ReDuCeS\\ It By< SeVeN>, WhAtS| ThE ReMnInInG- FoRcE?',
    answer: '18.00',
  },
  {
    shape: 'the two numbers restated at the end of the question',
    text: 'A] lOoOobSsStEr^ sW[iMmS aT/ tWeN tY fIiV e] cMeMmM sS pEr/ sEeCoNd ~ aNd+ A] nOoOtOnS^ cLaAw^ eXerT sS fIfTeEeN] nOoOtOnS-? hOw/ mAnY tOtAl {fOrCe} fRoM tHeSe <twEnTy FiVe> + <fIfTeEn>?',
    answer: '40.00',
  },
  {
    shape: '"adds" after "dominance"',
    text: 'ThE] lOoOobSst-TerS^ ClAw] FoRcE Is] TwEnTy] ThReE^ NeW]tOnS, Um/ DoMiNaNce] TaP AdDs} FiVe< NeW]tOnS-- WhAtS^ ThE] ToTaL- FoRcE?',
    answer: '28.00',
  },
];

/* Challenges it must not guess at: a wrong answer counts against the agent. */
const refused: { shape: string; text: string }[] = [
  { shape: 'a question with no arithmetic in it', text: 'wHaT cOlOuR iS a LoBsTeR aFtEr CoOkInG?' },
  {
    shape: 'numbers with letters missing ("FyFtEe", "TwEnNy")',
    text: "] A lO.bSt ErrR- sSwImMiNg LoObBsTeRrS DoMmInAnT ClAaWw ExE^rT s FyFtEe NeWtOnS ] aNd- A ChAaLlEeNnGeR / aDdSs TwEnNy FoOuR NeWtOnS ~ wH-aT'S } tHe ToTaL FoR<cE? um errr",
  },
  {
    shape: 'no word that names an operation ("sLaP s")',
    text: 'A] lO b-S tEr~ sW iMmS/ aT tW/eN tY tH rEe] mE tErS^ pEr| sE cOnD+ aNd] iT sLaP s| aS fIvE~ mEtErS/ pEr| sE cOnD? uM',
  },
  {
    shape: 'more than two numbers ("FoR tY FfOrT yY fIfTy FiVe")',
    text: 'A] lO b-StEr UmM lOoObSstT Errr ClAw] FoR cE^ oFf FoR tY FfOrT yY fIfTy FiVe NoOtOnS + ] AnD/ aNoThEr ] lOoobSstT Err HaSs TwEnTy ThReEe NoOtOnS, WhAt Is ToTaL FoR cE?',
  },
  {
    shape: 'a restatement whose numbers differ from the question',
    text: "A] lO b-StEr'S Do MiNaN t ClA w ExErT s TwEnTy FiVe NeW tO nS ~ AnD It'S MaTe'S SmAlL ClA w ExErT s TwElVe NeW tO nS - WhAt Is ThE PrO dU cT [tWe N tY* Tw El Ve]?",
  },
];

describe("Moltbook's verification challenges", () => {
  for (const { shape, text, answer } of answered) {
    it(`reads ${shape}`, () => assert.equal(solveChallenge(text), answer, text));
  }
  for (const { shape, text } of refused) {
    it(`does not guess at ${shape}`, () => assert.equal(solveChallenge(text), undefined, text));
  }
});
