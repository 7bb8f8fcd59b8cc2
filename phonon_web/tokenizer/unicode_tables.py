"""Unicode data embedded in the package, so results do not depend on the running Python's `unicodedata`.

Oniguruma's `\\w` and general categories, Rust's lowercase mappings and the Unicode 9.0 normalization set,
compressed in `_DATA` and decoded once on first use.
"""

from __future__ import annotations

import base64
import zlib

_TABLES: dict[str, object] | None = None


def _tables() -> dict[str, object]:
    """Decode the embedded tables once: range lists by name, and the lowercase overrides."""
    global _TABLES
    if _TABLES is None:
        raw = zlib.decompress(base64.b85decode("".join(_DATA))).decode("ascii")
        tables: dict[str, object] = {}
        for part in raw.split(";"):
            name, _, body = part.partition(":")
            if name == "LOWER":
                lower = {}
                for item in body.split(","):
                    key, _, value = item.partition("=")
                    lower[chr(int(key, 16))] = "".join(chr(int(h, 16)) for h in value.split("+"))
                tables[name] = lower
                continue
            nums = [int(h, 16) for h in body.split(",")]
            ranges = []
            prev = 0
            for i in range(0, len(nums), 2):
                start = prev + nums[i]
                end = start + nums[i + 1]
                ranges.append((start, end))
                prev = end
            tables[name] = ranges
        _TABLES = tables
    return _TABLES


def _ranges(name: str) -> list[tuple[int, int]]:
    return _tables()[name]  # type: ignore[return-value]


# Embedded tables, generated from `tokenizers` 0.23.3 (Oniguruma's `\\w` and general categories, Rust's
# lowercase mappings beyond Python 3.11's Unicode 14) and from `unicode-normalization-alignments` 0.1.12 (R9:
# code points with a canonical class, a decomposition or a composition in Unicode 9.0). Format after
# b85 + zlib: `name:` + comma-separated hex (gap, length) pairs per range, `;` between tables.
_DATA = (
    "c-rlKORp@qk>($&Me?0I2U;1uvpt5r7{I$^K7hfvTMf7y^Y@4GeGyDnopZ0QELpORhE#QVsxq0uU@+bh^~d_=mq$7u-anRye>i<D"
    ";}!6C(3kvo^;g2Hf0y+SCs%qIl|GP9<>llqSNbiStY76GTOY*!Z|VOY54Y-6mrM}wynri?{_59PJk;S2uV3B(8gL7q7!>%de?@$|"
    "JXU+Yd(<(3+wj~D%KnI_%ysn-<mLqr%a{fa!O|Nh&HWMlTVX2tOnG*~=Ziif;rpc1#evZKd)~wE!Xpg$Z7wH^=+HgF);~FMg)G4F"
    "(!49U9&qsARp*m=w};;!uRB}E_C&no26y&riy%7-8ZJDk=(ano%5YgQ#WK(srnUJ2i|v!wUAXs;6q0Vj!Y*I39h>XGfCjt_?6I<h"
    "Qae3(*(xPDS)jvicmTi+S-HvbfjqZ7qI`OQ(iUAkuikV9ETQN=Tu-obU6^jy#rKn<pCln+w~bjHpstvxkCS0z!<IN8RL0rPLeejC"
    "9;fVHhqo`+m)lDiTTApMqm@(7LEM!HHeHOsbLp3t+;#T1U7+8ewv5|Tu~ql$z-;^2#`=Zp@(bUP`_iRbVmBoa3ox)?wO7AFxX&ZB"
    "WS>^SaTBBqd{yo|1l)+tO(36+F#)ZAREayxF7#gd1F@e0Q^<X?i<N9-2jwSSZ`Ad;sAyX8g$H?f+2{V&9;Z^dAhc6o+WHim>_V!7"
    ";H2d2ZBU*N;pK4k?Tgr>z7|}iywNMAZ;C&X-T_KlaG?<rsl)>qrE<C0ZCI78voC#DZqk$=-%G*%1!Yh7%dX*>N;oq9QqqaW>~KEA"
    "ecL(iRBG=Zo(k=*^y$a>U2cB460Qo8b_<r}a1joDQ>GI@ogqKgP2_`;gqIBsO$dJ#Y-B-P28dM%t;jRV0$3KE-3jE|!t*MKJ(4l<"
    "jl4~uE($MUcLm7EeVV2#CbIy`+?8>6D(iy-a!MW}IO#i3iJc;Eow%#ey0dA(>Vm-Tj;e63ILsiiK%vw(P;S8K43*5epIqE4qq5pm"
    "U_@c8t~8tegdD?sF5?*JpQqEmfFAGcpyD(h#yt-3Kb(?EEGl&TY&VGox|Cb@#r}+nEr=#46#@LH8W-4Q2}x#LS0!a$As<yNd|60w"
    "<N{#1+crsduWL9aPMU@ka!=C8nK%UK5SsebeS+5HC@>?;!ySer$ct>eDI0YMeLf^RP*aVy0dj0Zvx@>bms6%s?gM4WPe*baoKjc*"
    "SjLfU%FOM1XQG!IX`d#&)P%BI=9LM{XvXUeYi>-p8c;4w!m=sORIECDa81JBoiAEI&^=i7^E`=!GHDL$tPw>c#d$gNtocRH7(m(`"
    "CyyF&G<M7lG`Jzr+c;T*@^DQvpLQ(5e8)Mh#za15$1&t_E%P~xhL=uAlU9=2AeT(t7E?IFz8O8)VC<94J?p-<)uvmv2^D!7JG;n~"
    "wxPo0WccxyJz&fzpFms_i`mdoR84Z*bn1Y$-3ai~%Z$Rxq%~5SWLun@6nTS>j1PKFH4W+*+on$oc8oDarYwAz$j3c^1yEHm{F~T("
    "(S0;s+yx3J5_*^vs612!zAnl?1H?V4-ELJFf?gSIv74z6r+r#YtW-OlVaNbyjG!2IoDGQktopHkHn4|tGvdVJjM+AORGxW;EjO&T"
    "0brb2kGx+eh7bml(%4W#8Te+kgGf$j6G2enn4HD|_jyCIQLr;+2hesSxMgCEyFO;W#jC2HRVOi>pGs~sbW}sZK%n0y{F=Ib4jb^^"
    "e(wiQo)){=JZZO89TTdFxobLt?iP=y3D;N#NZ9*iFt4^GF?>iJr?TI{D6=9c8P=9br7y-?hkA|Ylk*I@PUh<fLNL&5t%HIC7vym5"
    "VS;gN&Si6A-@sN$qPtQ4F`;#vA(KUcji%Lj9trC(7@8pmPcXKU$MkU~72tHJNkjbe;2Hys%Os*b922)SZdOa3aOn)8Sf4XdMlEb?"
    "Xl%nmduG_q7#R+yH&k;gl1*#G<7SQ%#<}0dHu{On#vx7JAmxFz-ALX<KeRo6P8yUShj7SfXDe&dzO9pB%67nn7_ccgNN${KyYQBL"
    "*v+wj!ElS?;jdR^W>fB(m9ERo_PiS9U@_aI<eY<*I@^DfR6b27I*hY`#kawQF1t4?5=*kff3vyrfyW-oDzSw1N#{5QHCNLk4m%OR"
    "!7=ef?2ECa%h_bXFjrK>q*>$#o3p%Z5Rc<9EH1D%ck3`ieRd}N>-M5cn5?KT+;5+>zIdq>2y4vGI%k}eTkwuB&TTNh22?@o!Dv@r"
    "?(Be?^nr0=n_OpAaxm5io;t9)&oaW9f)}P!F;3^8P15B)W;B)KFro&X@DL7lajZ4a?{OdG!6r;o06Qghj*VHT9Syr38VZ=jq>M>J"
    "+hokxCQ7CBzKpv-={Srr+i@RuT$~-FSxtEWFxYRb(<6fk-OIGr*6evWVzah97)q$KG7X>IF<7X#`%N2ivsW<;if~~@@itiP*thFx"
    "kMl$sLmh|hoXLtD_ZQ-8yM_$Oe$o)UQEk3K9sF{gh<~$hoH^;ln>oaqA5v*PMNgb`5W5KgJ3W4qm&c%r!Le~<h5!$f*5h|Wv{7#|"
    "2)q#|bP!+#ys!-QGfcv3D6JGu&d6>(hmN=n-$6Exn@quWrgmm~{HmNi7#b}UP*rw~r?%+;tz=J5X-iz+RCy|0QwiR%OtJ68wLk@>"
    "oyudJP?M*!1eXQQ#WH-<w*wQ@Pcha2O3=lMgKFz<E_I2w9FqgQK1EBSu#6x~s2_lgFh*t=Bfj|JyT&Vy%Z@=I9XQ>SsC&E6x%d{n"
    "IK~>Cg<k!JoMII(W|O(i>j)Plo&|T_BKSE4#+v2RI#iLW{__oI9>_3bI1Jkv3K^U&X~Z~!n#!j3X4#Mi|Fi$ZyM8_7!SS&VWtt9-"
    "ge^bGO#=5HCL@GA$cIw(Y=X?rcKTXfrc%@@wyI&_RfA0+fxZ8+!p+!r@rQZB@6^bn3*7^oi^V_a0;R_`)7k44jXZkzFd^E4xI|~$"
    ">*DzFqJb_tFxO3DL-~|Nw~R^LHp~(tzfQrbTY0;^vHs=y*Oz@46x=Y)R|!%cu^K05G10TE(JdHd+|Y&I=++@vY4PA}hif>YKn3KD"
    "P+V~)BToX(>q=D*TLl;n@(FtHz>Q493w4-cuHu7@BGKGae)s0Kj8ur>65WRRGR$FczY4h(=;WcV1qYi?@q?!}C@Y7tIDdfk%CT<X"
    "k_k6JQ#e4{epqq=2Z+3Gr;FC9*Jc}jRd+xiSOhvyE{rzc2q>MIP!7{jyBmN`(R3AxKR@J5-A(SoGwiO*B<c#+3-;&Yv6jWUaV4E8"
    "7fnVi4`yWp@8k{vBrGp)w^apZ7k4^8fh-(ZXo7(velavS=sl^>b#XFyCd&lGbVve@458x}(T|Sz|MwOay8Wxtd>@2Gt!-~^2A+V-"
    "n2ALD<m%QrNxU@`FPQe@JTJq0KgDVj;wp0dww*kTkxMV}qEADj8Vp7pGz<Qd><43&)uJ_v%8`EVqlDDbP>6%5o8m=k4?S`WB2<yl"
    "9hBvshI7JSmGm4h8UR@bpQ<A|NeR$~eDNBod78kD7a2#?3%n|ML0wcAY^FQ7`ZPgQ7`=+bg)B}!+?20;0=wO5uygYCG^4tn84<Ub"
    "up7I;5TZxiDnVp;<;&)7tTMqq)5nEJ8mOxhPZ)7@+z|lqbXOg~&UX&!rprIZqrx4<%D9*-YAT2kB8=SYRre=r@IC4B%A;tE@)R+f"
    "5d*9=g}iQ-=M;-Y{Np5}D(T#rdr@ZFpWMIzTI4@SA3;k`J+zZ*6d4&0OU@W^M2M!i>$>v@2L^#m2g@hlBJ^ihL=6LqL#jVFQ4Q(P"
    "XNlxFJ?2@?K<ogmLN%Mb?E>qKX3^DBP{cXzgT*e3xP(>#xX&ZZ0Gy$LFEkMea^Fr#<|@$BKg2l<<RMVX<#XEG5{*S1PgE=?8+S-l"
    "{SZc0<-iJG3MBdMaidh2e-`cU+rzziis@%P<BXAJ`%DPK4Le3%^E+-ICey8AMg(YI1Gt;+QnYxEm*C_n+I;DRb;>=m$|nj4WyE`m"
    "p6{={M8$$&KQc9&Q;(87G^KI)y*RWziAHElbY<QxMB*0-*0xLZ>y*1diBTA*(2DGb=qHJXP9`b9xiFTTjoREeR&r9vfII$zY#_)3"
    "A^D=ta_pp+?<B`Z^u3FDE+Aux0Uy9EW{a>L2>peXwMn_YQG|6Ja<DD34pm)jg9G^i@>uVdPLKKcU<fqLLiko&Kw!Y>y69f2JaCaV"
    "0PKWksk+O7c{K}sq!}?}kkgEjL(tO~(skudbE`^mU@MqE4ob=?6q<Ps-9fY_(0-J|R}GQ)m~UWw@`z1SA5306|E;^{updtLuy8@1"
    "w#q8NCCevj!^w&4vnFqwY-k)SYn-Le(G{Rjz~3XuQ&jgM5q5l(=)%F0`<q7!1iYG?Y=KQC5cgfkmrzMS^#A0WC*LS?z9_spNLM59"
    "ly2Z4!ZztzsNk)zsr!0d)U+n-f+vl3y=$czCfpB(PQ<ZDWClU)<QR2_cgrv!w~9=pxF+W9RrIVP7qS{pUzF%xrB;~IzA~hsT6M~j"
    "bX$_1S^I!9i_R=t!{>oZTyjjQb5+sr1CuHGGC?+xrs7UE9&GWVT5(7EoHYFU-fvh5)HRnaFNoX6E#&bO-UnJJ)YI$|A%Ii8{IOc5"
    "O5ffcJLMKU2fD%zI>aZPtU&+3*TJ>%fxb;iZmSYSvM-|!621}}ij)iVt-z@$pDEK+2(?SjA_iqAy}iq$F2pl{iXQv`WO-FQzSE7{"
    "1RedJUCtnEI&ODiawD*KsI<gU3qZ>z^q0Y;8=O_bQTiO6bh?2Tp%$-PdvwaJc7&i@xrFkgq||H>+2=Y;Q(Wl1y6;XUqKleYx4>#="
    "k6B>fq1&$zyy6K?prfUzTo8$S0XZ+`eocQrQ(v~6Z|Ap-3S9#t-U4`)8;(-QA~||7;VcM69QiX3LKYW34A7z*L7qwxhsTK(BIH+u"
    "xybtl%h!AXPS5xrsbXvrjG_@z{y{tvMYS}0+cIdV@AsCw2`-Fy3G&^+?O#D@2W64(^0dMQ*Y(9ylDBaBI?;5Nc^n<V=k@;E|9*>*"
    "lad;yGTVO&{NL{te&Y8(?R6(&&Q_M$RDR_1z9xIm8$D+xJ!kWTpJ{#fJpS=Z?~fmj2RF&9=kJ~OlLx+jbTlYMi-3q~n#UgrL!R&*"
    "M4JfiXIR<xi(=CKN>u(!oZ_z5G;!eEhLb;nm^*7_@Ww2}=>Eyq`b)mHe~C4e2c47UQFXk(Tm#*!LeH`nl&{V<?!*m0H0;le`vC7B"
    "^U?x6;)g`=lu!7VGZx0VtG^Og{kdOt%62Rj9`nD~qg?!3CCU1gFXOL>y!I6)onDyqx5F7H@5Ps1;YoGKub75=yGW3_>wbGi)dq~("
    "`sysmXA`+tPuM#W0=_!`U6EUu(*{M)wWs&x6H}l}7d;sQZXYFNw;|y6Po{l+zo7d2FTRT>FNpc_{@cI2WdMp`is<Y`9n=39a{Al8"
    "|G6|`|57>TMi3<q5B}?Y?n9-SxhBdtYNX$`KKC~qhoAG62if`$rWlT1q!G8z+$A#Vh4`wsy2KyL{o|yQJNTNee>zzoekI!eMb?HS"
    ">=sv3IsGLn$GQfMJe3Up6SE?_8J)}jXqw;nTK^^1@T!g8V|qO6c+nGCrgGD&wa4;()6bkU{v0iLBaLtrZ%I}Sut}KxdT}|-dWO@I"
    "x_<?7aU&Oj>3WlOSgMQvWE$$PZ6=hjvhQat)&D5R$`4Un`bq)2e=VL0L1SOytBzOyKRS)+MbYR)k3A<nc7M@h%MwM8EuZVL)fCIj"
    "aPv?!!{ox=en=zz^t~Z)qB$Au+eVNlftdv^z-3*p6{_riy}3QjIu|QmYMwaEsGXFE@%wN8{mnOowO><tR@)_q<f{`&qX|)fQ`JJh"
    "Oxf@oiVTo5%0#YZWP#<QjjEc=a60P2FR_|W=F3V1rujL_-cG4@yu4MgN^pCj>pe4v%%L~NBVR}aizm`7kQr8j)jkx-Y)Ed(hoy6s"
    "voV8g8`)`@RsBrRNO94e|31y>=9p)Khl#}!$AJLdb?|E`cb8gkjmJnO3(`@I*1{s5#N)9Gy#^%G#f+`^{%yN+suvbw1ZMRHDY|A7"
    "lz?;5flqFpy_s$9(H{P;dSRUOl!)`Ly*ju=1~%oaOvzB1nXpUDFW%)8NYyzX=}UQ0qtf|Quk@vP>h)`hP=3+F<08-07jm8kAgp|4"
    "Wy2R@qSmQ`^DK8Q$`9u?v05lSrz2ffj_QZz?U>g5N!C)-P&|e6!a@sMl;Cxgbz1BNNo=2{D0Th=agD?qmfL@li&V8LYT>$8%R`FV"
    "Bti28Bpq+lgnoxD32K)(%>~<8RwRDX^(SW>`P}h_)Q}HJMg`$oP?PhPHL=@ng`h>+k!F(QJFqE&m6lt6QSf)D)Dnv<Ufb_#?4g0M"
    "AA+hU&jq-x*W@bj-QqRHU=(Hr0lHo6QBgVN59Hpk*nlOyDXB*+Rqa*tLs>Q+^dGx<AnO(e?H1;gh${reEs_qE9^edl9kEbvK}F;b"
    "2js*!2@9tY<=$n%$iV2Fqtn8Q<_D*y*fk!Cl~TpCRmL^?;zZaqN+;}2vD|Ei`C<}6{g{GNJ-jUE*K=-S97O!%@@-18?3%pMkGeB6"
    "^hYPvxHXSdnqXNpL6ZV~B8`kp8VR=_Qm<l(GksS-X2#U|bL7G-bAu2EDt}FY!6#ozfNAK{<BRcF*~-f5Q@GQ1xtTm#Wq}ipGg4g+"
    "IY(g|y+b6y0^FA;XtWeSA|T7_Jlhhvd^gizgO-*3TjKI*u8W6O_BDpix|t~3^C6{Wxm)~rz|77|i5YRSBI_a4*!g4AOv_7)V0ZcG"
    ")Vh?7IfQK!j2!V}#!9&>Ak)Qkm28q$Qv@4Z+-Nn;j=ba7%oV>-Fhp$=0d`j0ov4zupnn_bDQNn%fI&NNP^c@R9Cu1eSJFNvqd>TC"
    "ugNHqFLs7I8Kqwq@$Qf+Em4d(C7*yhxtf_#(-*pYl3{YKKQ^nRt4bjED}%_qB~uUvVfTRj)T}lpyMK~Uk;49ukwW2|FzcU`Eb;!k"
    "|9A@vYF+zmLi)?6ox-A|2L&XkQnO$J*r&a_(r#I6T3`N26R!Xf(WqgFw7L!HqTw)bF+KlH_0wwIQ?vtwV`X3(-G}_GnMJK1)hnX*"
    "D6$EPS~sChnQB$D0rt_dV3d1~+PYQuGEaHq`xB&hlAP0r9fZTZEaDsm9%|60rfQiam1eSp6&XBndu`JdkjSg+ViO}x_ReL}H3FNH"
    "X%{&MHHxS!qs)58>RVtYlOz6!L>d-ZTXJkxap}#|=vaSPRIk^5QQD^~7)JbH$YgRwoA04@7gG2=^QLYGbY_9t`p}~CFxt<B`qbS="
    "AXl#b#nxWTV)KWa`eL<9G?4Wi&7nNHPGteSB-ZK3u@elSsL*NO8?B(+G#Fb~(xYQZB1DXIu%lib+}zM_rP66h(yUCZR+JRtCq;<f"
    "`q-cX%X)3Zi^w{Ma?47csmyOJ%5YGE_EhTU!$}QVq!<irDE5;5jg3HGryxn2ep6y;tbyP<R-O#cJXdJHm-dYa3HlzBQu8umJZ{8i"
    "DvJOM4Pcy#$SO0YlSVn2b95Iav{`dhM<=Ibg%wHJ)OmrloF#OQoA~&A7tW}c?(PFaz99u#tJ+j<3cOS!KFtrVg3UCFb2iffX<&%L"
    "T^@OOPf}oCxZ5TzZBm?vd0VG;RW9wyRA3+Hxr3F9CmR=ts<c<tt?NDtBv~~Vu~3%Eqf*j&vE40`(laabLmFji`<L?;Q~I>t5!GrN"
    "D7GkN&_xl@)UOk%vwFzgm6jzn?|1uKT}GjL&>UmW&L-&C=e7MJ4ScUHiM-k=P5a_`7W+D5Gt1Lm*~lTP^wFrRCyXF{y)i0#Veb!j"
    "DBXoNIKAEtTWMF#-LYt+QR!Ty#>@@IGdOS4G6)j9D(#pUP1PW1RwklpI&x}Cl}Y{Or<>QfjXp_<1%snYg~@|33JR?&UpS^7VlcE="
    "LF5EzYwHxyFR_#>>RqXFORmQXbS!+>EpGE=GNxKBJ`UG8^;kR4*&8F@#^JwS7ZWJSYJOq$p~XO8i2xaEI!CHv#{gmz3z1@Re5W-q"
    ">{ON#)Q&j~-PytSqsBZp4INvV*?C$PFC7)UbgaoZS+*uCkOfP&O6OI@ZkoHBT}t1Hd~2bUWm}xO>M_f0O07JyR_>7<Tq-JndV?pr"
    "Q@Hvm<wsfU+>UKmSVW)Re|Nq`6u-NSI`*uM8#_+Y+UfWG_XjI6GmOl&FxgwO+9eshlppbyosA-9aAR1amSI&C*H$rYk?c<oaYKM="
    "JRgG!DEu~VBvj){VXu7{_zCV?$KAn=hXff_H{fw;!0QNgv4Vnlpzd>g=<9geb*~EFM@hNv^ZIAVJ)yZU@ph1ZMmKJAnCC*1(v*P>"
    "dB*$i|MKQCNNy`=Gyy+X(Y9(UoFpZ0QUsB<gmApuO=(!cn3v9y^7;Pz@86oY{4k+6uyI#}N0h2w45{7D^cK1%G#Q0?is(lP9C||L"
    "%3fdTp~%0e1^B-3e%K=HSzqApN^JR1QMu9Bf}zk-ax85;yDnAW3tSKQPguJ}E(dQBtLNYlb+8%{SJ~;ROd?pE^@Kh|A6-Q#Qeop|"
    "d1R5ZBng@Bj-5CwEO~Sj71XR`*#%XHDMCTtE}1gJ+6@VIXl$#9@E|I1#~Q*qbiat}Ufc{R;;zkWGYNWp4;nXJwsgyQfB(b&me>Xo"
    "(FO3l<2WuW-jZ7C_dgtOs5(z+bd@<HUHNE|v50<gF2ibEjOVZs-eti+6wvQSbyl3-*etV8m)ZK~lBfOkjZVbT&+ly36Q%&zT1FGZ"
    "G8)N%Nf#48kSj4<UyG=@=bnCZ##j0gQNcT#7JvB<`D0J5V(w3mZ^*wxCz%5iAM0r0^8*Qd?kT0EJ)u&2mc0Mre1m&A#2d-yGm^LM"
    "A0M~=_#4sMRo4USIJTdF)`7fWX#GEL8+#CFI~%GfY^Ju)>7k<=YLwfqH|<W8o;n46?UwJ~yql`u%^T9Jh!33^tcRGjw)V~X7r6sQ"
    "#%4VcMu_w<kAPRD1}+hpo!Uq2c%0Brq2Dj6TTq)t_X=o?g$;GAOB<VKz;_@JZWW#?6c3>Z9W{v}3*8tO6(cQxzZCcoL{F%vMUXOd"
    "81WN{?sbS_u{t$rHg=B9tf?ypdo)K;X5cL->;@JshXh52!^GN#H*2p=RWd+X7xhq>&%;ms@7pLsG;f$W-~<NvcW}N+T!O}o{Uciw"
    "%!1_u(gb_J5~71QjW)}SXiR|1%0=(BV~>sGebRh9SIl=4v^d`@w4-Ty{vo;<?T1~35?hbaWUsQPC?b#R=q$#FW#NXRP#m4dI|L0G"
    "JOXk%X<|_oE*HHiYS<_1%WBc0ylYnyHAq?EtXeM2J_HaDzjjibk48VM;QTtY$A{RQh)9dJ8P&I!q=*vCG%u_M7N<vMOUGRtxzgcM"
    "kkJZ#Vj_we{)amPN0Q~T2xL0+ZtNy3`wN~cZUv(irTG0%l2X8Mqo>j1=bn{*H2?J%ds1RUwqUK}5O5T7S+x@*6YpcvmgjSV!)oF;"
    "+<ku~f<_OKHb9dIm!Oy-f8_v$(%B_PJM%>PgLoNMxcY;{yrG}VXLPg5w(ZwJ-(%I?+tP=%t}H+4>dA&cTn%@uV)?d_E5exG|Fpls"
    "i(B9vIyY<ZEggKEzQb67skpGICOlxEgmq5{H<Uv64B7#KQ=^wR8~0<POTgU&``xro`R{-Fzi-JF6xWw_mVRM{>M{Qg2b_=U8(MfY"
    "LmJK7xu<*yL#W8k$ekxJE+*z%M>NtMI7LLjB^2|pqAAW5`*z0nKYjnU<;nR5=5er9n^5>FM6p|!a)hARdxs5)0O)FNCv@mJ7Hc=_"
    "*7Y%>ENtxMW+A?^N<9rv-VO)e1@)RehYt0s2_0sSLf&qLu5qNZs|$sO;fKVheKhfQ<`5SrNSsOp%}s@V7Vd6tA-&HE+l>Uq1C~)R"
    "4?k!u>?x7Fu#i4%Sz`gnDaz=Lj{;xGSasqrl908(=qo95fCE+izGEjWnoI;xg-$Cw`MdVGMxVWrUBk}7bXUNW>l0%VunqPHj78>q"
    "NDy2iY*dt;_|qi7oh$rHA$u*qVaGlAD?DtY+kxTEH2lMCt|<Z(HTEOKx>HGnsLzE>xS+TfBnKgRDj}NIs1`uqLleELQ}4-o?}qY-"
    "&bGUadnH0H;((h}*umQJIm9E#w%|=XqEQ;?Ux>H_^aVlfI;aZ@QG*?_QUUZ#ddPD8PR+nLHJ-RiKT4@V-k;lt$v*TGf5DbJY&lqY"
    "kqt~IQcLMKVPlQaHUXwG<QW}I7wWJN<gKzEJ+ocOsjXZP*@Ikb?|=U58+h7EUVEZv|B9c!N#<g|By;Tj&wuGxiXHU+=l_&ZU-$cO"
    "_BW7$_^kV1*V{&`Ebw<A`WCs-es|TFK%Wne$#Na+S%S<yDl5lX`9K`+eKdCTA;X=vX86tGA<S;?LcdUer0e}R-@l#9BG2jjbS`C)"
    "gQ5P^>v;dof4qgl20-C%h6Q}C8i7zZs>Z7d8(b9h7`W&Q#IMa9O!x`jI<K;WFPK6!<vWT?%zoF#X%?Gl6Y4Lecf1TIS~l0G38$w!"
    "!&G0uP*2cyiGD<GJpB}P^wk_~PVe6ma8uWN#%B{we;z$GKLBkv8qjfc<5}z{PO5bX)1y3Bsodp3hq}Pyh(NFj1iHrzJ7fGj%QiSe"
    "9>p$xG+NCBaNN=cl=EFl1&}Sfjpu|odWZ%-Z)B^o6I7j?#;XdNGV1D*DyZ#&oFs{+-#Iw<uM=3`sXX<$Z(PI0FeY3%{_fk&UtsBz"
    "?Pc;!yJ9ihJLs#8`V)V^=i|3bBDG6mWK7VryHhIGx(hZ;(nLcv!&#ZLGB72ag;|4%Oa>ExSM3ZwRT92cYI>&EXowZ@lZHe#uQrc2"
    "f9|eRUYc{LZT&XnoE%mo9xlef9g++2Q18Y9Y*1hA<i)z0YJYVN-&#`sW&y3k%nYz;aBF#6v6R}h<yL3KG(*{=T@sqqb+6$AFj|?c"
    "g2gUheHA7kAV|M;6ddf@<JkTc%2s3q2hNX#A7(-aYo9fzPqqpEwI*_4za}laLL1(-)fbW+(7;9HTR|5wcmnym6+wS#W`*yRmY3*y"
    "g|gnzTc%ZoVe+AwTib9PR;|MC^C83`aRP=mGg<xe^g9xPdb2dvJlWY=TV+8o;(WTONer23_?j$qX{5_uQKJ?sgq^#8?_%_nM#d*l"
    "UO=+U)AjuQ2sPqQ(U4aCF(ULPa@zTA#c3tsu|af(d$kL}I*>5Bnjw`dB(%p`?vCbR{_P-(;4wptn@Nf83b{<P21WJ@dHxPYX{If@"
    "(`}j=MzP~HBQ5gOgvxv?{qcjK)?&2d$M%TKqKxzpub^RMSXyR-HWx$BT+QF#py5UKTFU|g^%Jjm!CJZ0jBF!KQLreb00&xr0W#1C"
    "^NE~R2Pn>?rqI*H4Vuu#=Y<aMtiP79Y0G-h<y>8&{m>KLElqz9><a>pj5(;qMcEXgovr$dS5Lo`QAUNZd-_2c{svdaSz;^dzO=}~"
    "pe^yI)dWXq54-^+_N5uTHEHgkqXO)ZEf|p5m?Ao~x#!<|xl}7Sm^7Mr#l>K_wlGZ4C5gtC*wc-@Hr4RI*xJw2Fn8=58P_`&cuc>|"
    "xanq(7V@LlKNFBb;+EMDgn%Lv<KaP+($J0HoF3Z0c6)Ryc<ZWr29yjTRnRcf{$&0AOEHzvddsu1y@u)=Whn!*5JeUfgjyloUg{W{"
    "JS6S%j3_KGD1hkkMO)dGi|rmkUXtK?=Fx4OJ=o*pwDaYlx*!761%(9W^ZwxXo91ElWuzv4A=%R;?i_3j$h>pm4ih3=XlA(w1W}4O"
    "E8R#NMe{}pYGrn|itA7T-AJ!E=AW)K;a}%pSxJNQl25t>{lG(<HOZ@0DH$WqtgPyY_Hz+#IwWvfBGJ5acyLhiKPaR8%E26lOx(fC"
    "CI3*JkH<B7^$+JUjB|%XpGY%?t)l5sYT~uoHGH$blr*=ebiwqY5lwu#{_~R8`*+3CG@rJ^kD~-%hy}~+20V0{ocK$DW(O=h3KexT"
    "h1N1I+*C0@`f)fagL$+H3mP=aV-HQdg?qRfKZX2dC>v-wuz5{?i^9Xt3(W(7?3(9|>X+PUd68ttlZj~ym<&T{c?HEEY{A#}vThE&"
    "!jfDZ7)o3^gWZnZ926Oy#;-0%&u$TQvr1;-KkvW&U;q2x{`lthwSL#%wywbK?K`O@>Vy5e{&vXdl+h(!ID8)+K}JzVNk*HDnvC}E"
    "#LwFiotE$Vds#4c7(0wT#vbE<F*YVej3dSg<Aia>IAdHeE*P&EuNYU1E5;kf8^#S|!n0$%V|-wYZuaTK7~Y+9VJrwgGT>hUe+K+3"
    ";Lm`61^gNCuYf-T{uS_Nz`u(3=G^)``D_hihw+ZF$N0cFV0>a6F}^TPGTs-AGsX_%g0aVV#W-MGF^(8-7!!tuamIMZxL|x>ykdM}"
    "Trs{d-elYW{|@*Y;NJm%1N=MSZ-9RX{0;E$fWHC$1MoM%e*pdl_z%F}0RIvGKgu|#i~"
)
